import { Type } from 'typebox';
import { CalendarDateIn } from '../../platform/calendar-date.js';
import { EnumList } from '../../platform/enum.js';
import { DateOnly, DateTime, Envelope, exampleOf, Nullable, PageQuery } from '../../platform/schemas.js';
import { CustomerSummary, ExpandedFields, ExpandQuery, PropertySummary } from '../properties/properties.expand.js';
import { JobLineItem, JobLineItemsInput } from './jobs.lines.js';
import { JOB_STATUSES } from './jobs.states.js';

/** Local start time, HH:mm (24 h) in the organization's timezone. */
export const StartTime = (description = 'Local start time, HH:mm (24 h) in the organization’s timezone') =>
  Type.String({ pattern: '^([01]\\d|2[0-3]):[0-5]\\d$', description, examples: ['08:00'] });
export const DurationMinutes = () =>
  Type.Integer({ minimum: 1, maximum: 1440, description: 'Expected length, minutes (1..1440)' });

const IdString = (description: string) => Type.String({ minLength: 1, maxLength: 64, description });

export const JobStatusSchema = Type.Enum(JOB_STATUSES, {
  description:
    'draft (created with draft: true, not yet published) | scheduled | in_progress | on_hold | completed | canceled',
});

const AssignedTo = Type.Array(IdString('A team member: the userId from GET /api/members'), {
  maxItems: 50,
  uniqueItems: true,
  description: 'Team member user ids (GET /api/members → userId); each must belong to the organization',
});
const Services = Type.Array(Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }), {
  maxItems: 100,
  description: 'Service names, free text (e.g. "Mowing")',
});
const Notes = Type.String({ maxLength: 10_000, description: 'Instructions for the crew' });

export const Job = Type.Object(
  {
    id: Type.String({ description: 'job_…' }),
    customerId: Type.String(),
    propertyId: Nullable(Type.String({ description: 'Service property' })),
    status: JobStatusSchema,
    scheduledDate: DateOnly('The day the job is scheduled for, YYYY-MM-DD'),
    assignedTo: Type.Array(Type.String(), { description: 'Team member user ids' }),
    services: Type.Array(Type.String(), { description: 'Service names' }),
    notes: Nullable(Type.String({ description: 'Instructions for the crew' })),
    lineItems: Type.Array(JobLineItem, { description: 'Priced lines, in order ([] when the job is not priced)' }),
    total: Type.Number({ description: 'Σ line amounts (no tax: the invoice adds it); 0 without lines' }),
    invoiceId: Nullable(Type.String({ description: 'The invoice that billed this job; null until billed' })),
    startTime: Nullable(Type.String({ description: 'HH:mm in the organization’s timezone; null = any time' })),
    startsAt: Nullable(DateTime('UTC instant of scheduledDate at startTime in the organization’s timezone')),
    durationMinutes: Nullable(Type.Integer({ description: 'Expected length, minutes' })),
    crewId: Nullable(Type.String({ description: 'The crew (GET /api/crew-tracking/crews)' })),
    scheduleId: Nullable(Type.String({ description: 'The recurring schedule it came from; null for a one-off' })),
    occurrenceDate: Nullable(
      DateOnly('The schedule’s occurrence it was made for; null for a one-off (or a visit the schedule removed)'),
    ),
    reminderSentAt: Nullable(DateTime('When the customer was reminded; null until then')),
    routeOrder: Nullable(Type.Integer({ description: 'Position in the crew’s day (POST /api/jobs/route/apply)' })),
    createdAt: DateTime(),
    updatedAt: DateTime(),
    ...ExpandedFields,
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: 'job_01JDYY909VFHTXJTQTNYRZYAKQ',
        customerId: 'cus_01JD8Q5M2XH7Z4W9K3T6R1B0NA',
        propertyId: 'prp_01JD8Q7A4C2E6G8J0L2N4Q6S8U',
        status: 'scheduled',
        scheduledDate: '2026-05-04',
        assignedTo: [],
        services: ['Mowing', 'Edging'],
        notes: 'Bag the clippings',
        lineItems: [
          {
            serviceId: 'svc_01JD8Q9B5D3F7H9K1M3P5R7T9V',
            description: 'Weekly mowing',
            quantity: 1,
            unitPrice: 45,
            taxable: true,
            amount: 45,
          },
          { serviceId: null, description: 'Edging', quantity: 0.5, unitPrice: 30, taxable: true, amount: 15 },
        ],
        total: 60,
        invoiceId: null,
        startTime: '08:00',
        startsAt: '2026-05-04T13:00:00.000Z',
        durationMinutes: 45,
        crewId: null,
        scheduleId: null,
        occurrenceDate: null,
        reminderSentAt: null,
        routeOrder: null,
        createdAt: '2026-04-28T12:30:00.000Z',
        updatedAt: '2026-04-28T12:30:00.000Z',
      },
    ],
  },
);

export const ChecklistItem = Type.Object(
  {
    id: Type.String({ description: 'jci_…' }),
    text: Type.String(),
    completed: Type.Boolean(),
    completedAt: Nullable(DateTime('When it was ticked; null while open')),
  },
  { additionalProperties: false },
);

export const JobActivityEntry = Type.Object(
  {
    id: Type.String(),
    type: Type.String({
      description:
        'created | published | status_changed | rescheduled | assigned | notes_updated | updated | checklist_item_completed | checklist_item_uncompleted | invoiced',
    }),
    description: Type.String({
      description: 'Human-readable description of the change (the name contract activity uses too)',
    }),
    message: Type.String({
      description: 'Deprecated: the same text as `description`, kept for existing integrations; read `description`',
      deprecated: true,
    }),
    actorId: Nullable(Type.String({ description: 'User or API key id that made the change' })),
    createdAt: DateTime(),
  },
  { additionalProperties: false },
);

export const JobDetail = Type.Object(
  {
    ...Job.properties,
    checklist: Type.Array(ChecklistItem, { description: 'In the order given at creation' }),
    activity: Type.Array(JobActivityEntry, { description: 'Chronological, oldest first' }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        ...exampleOf(Job),
        checklist: [
          { id: 'jci_01JDYY90A1M6X3RVB8QK2T7C4P', text: 'Mow front and back', completed: false, completedAt: null },
          { id: 'jci_01JDYY90A1M6X3RVB8QK2T7C4Q', text: 'Edge the driveway', completed: false, completedAt: null },
        ],
        activity: [
          {
            id: 'jac_01JDYY90B2N7Y4SWC9RM3V8D5R',
            type: 'created',
            description: 'Job created for 2026-05-04',
            message: 'Job created for 2026-05-04',
            actorId: 'usr_01JD8PZ3K6F1QW2E8R4T5Y7U9I',
            createdAt: '2026-04-28T12:30:00.000Z',
          },
        ],
      },
    ],
  },
);

export const CreateJobBody = Type.Object(
  {
    customerId: IdString('The customer (required)'),
    scheduledDate: CalendarDateIn('Required'),
    propertyId: Type.Optional(IdString('A property of that customer')),
    services: Type.Optional(Services),
    assignedTo: Type.Optional(AssignedTo),
    notes: Type.Optional(Notes),
    checklist: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 500, pattern: '\\S' }), {
        maxItems: 100,
        description: 'Checklist item texts, in order',
      }),
    ),
    draft: Type.Optional(
      Type.Boolean({ description: 'true: create as a draft (no event) to publish later with POST /publish' }),
    ),
    lineItems: Type.Optional(JobLineItemsInput),
    startTime: Type.Optional(StartTime()),
    durationMinutes: Type.Optional(DurationMinutes()),
    crewId: Type.Optional(IdString('A crew (GET /api/crew-tracking/crews)')),
  },
  {
    additionalProperties: false,
    examples: [
      {
        customerId: 'cus_01JD8Q5M2XH7Z4W9K3T6R1B0NA',
        propertyId: 'prp_01JD8Q7A4C2E6G8J0L2N4Q6S8U',
        scheduledDate: '2026-05-04',
        services: ['Mowing', 'Edging'],
        notes: 'Bag the clippings',
        checklist: ['Mow front', 'Mow back', 'Edge walkways'],
        lineItems: [
          { serviceId: 'svc_01JD8Q9B5D3F7H9K1M3P5R7T9V', quantity: 1 },
          { description: 'Edging', quantity: 0.5, unitPrice: 30 },
        ],
      },
    ],
  },
);

export const UpdateJobBody = Type.Object(
  {
    status: Type.Optional(
      Type.Enum(['scheduled', 'in_progress', 'on_hold', 'completed', 'canceled'], {
        description:
          'New status; allowed moves: scheduled → in_progress|on_hold|completed|canceled; in_progress → completed|on_hold|canceled; on_hold → scheduled|in_progress|canceled. Others → 409 INVALID_STATE',
      }),
    ),
    scheduledDate: Type.Optional(CalendarDateIn()),
    propertyId: Type.Optional(Nullable(IdString('A property of the job’s customer, or null'))),
    services: Type.Optional(Services),
    assignedTo: Type.Optional(AssignedTo),
    notes: Type.Optional(Nullable(Notes)),
    lineItems: Type.Optional(JobLineItemsInput),
    startTime: Type.Optional(Nullable(StartTime())),
    durationMinutes: Type.Optional(Nullable(DurationMinutes())),
    crewId: Type.Optional(Nullable(IdString('A crew, or null'))),
  },
  {
    additionalProperties: false,
    description:
      'Partial update. A visit of a schedule changed here keeps its changes when the schedule is edited later. A completed or canceled job accepts only `notes` (so a billed job’s lines never change); a draft accepts every field but `status` (publish it instead). `lineItems` replaces every line.',
  },
);

export const ChecklistPatchBody = Type.Object(
  { completed: Type.Boolean({ description: 'true ticks the item, false reopens it' }) },
  { additionalProperties: false },
);

export const ChecklistParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  itemId: Type.String({ minLength: 1, maxLength: 64 }),
});

const RangeDoc =
  'A date (YYYY-MM-DD) or an ISO 8601 date-time. scheduledDate is a calendar date, so a date-time bound is first converted to the calendar date it falls on in the organization’s timezone; both bounds are inclusive.';

/** Filters the list and the calendar share: who does the work, from which schedule, in which states. */
const JobFilterFields = {
  status: Type.Optional(EnumList(JOB_STATUSES, 'Jobs in these states')),
  customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  assignedTo: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'A team member user id' })),
  crewId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The crew given the jobs (crw_…)' })),
  scheduleId: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: 'The visits of one recurring schedule (jsc_…)' }),
  ),
};

export const JobListQuery = Type.Object(
  {
    ...JobFilterFields,
    ...ExpandQuery,
    startDate: Type.Optional(Type.String({ maxLength: 40, description: `First scheduled date. ${RangeDoc}` })),
    from: Type.Optional(Type.String({ maxLength: 40, description: 'Alias of startDate (startDate wins)' })),
    endDate: Type.Optional(Type.String({ maxLength: 40, description: `Last scheduled date, inclusive. ${RangeDoc}` })),
    to: Type.Optional(Type.String({ maxLength: 40, description: 'Alias of endDate (endDate wins)' })),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const CalendarQuery = Type.Object(
  {
    startDate: Type.String({ maxLength: 40, description: `Required. ${RangeDoc}` }),
    endDate: Type.String({
      maxLength: 40,
      description: 'Required, inclusive, not before startDate; the range spans at most 92 days',
    }),
    ...JobFilterFields,
  },
  { additionalProperties: false },
);

export const CalendarDay = Type.Object(
  {
    date: DateOnly(),
    jobs: Type.Array(Job, { description: 'That day’s jobs, oldest created first' }),
  },
  { additionalProperties: false },
);

export const JobDetailResponse = Envelope(JobDetail);
export const ExpandOnlyQuery = Type.Object(ExpandQuery, { additionalProperties: false });
export const JobListResponse = Envelope(Type.Array(Job));
export const CalendarResponse = Envelope(
  Type.Array(CalendarDay, { description: 'One entry per date that has jobs, ascending' }),
);

export const DayRouteQuery = Type.Object(
  {
    date: CalendarDateIn('The day'),
    crewId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The crew (or give assignedTo)' })),
    assignedTo: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'A member user id (or give crewId)' }),
    ),
  },
  { additionalProperties: false },
);

export const DayRoute = Type.Object(
  {
    date: DateOnly(),
    stops: Type.Array(
      Type.Object(
        {
          jobId: Type.String(),
          routeOrder: Type.Integer({ minimum: 1, description: 'Position in the driving order, from 1' }),
          distanceKm: Type.Number({
            description: 'Leg from the previous stop (the first from the depot; 0 without one or without coordinates)',
          }),
          status: JobStatusSchema,
          startTime: Nullable(
            Type.String({ description: "HH:mm in the organization's timezone; null = any time that day" }),
          ),
          durationMinutes: Nullable(Type.Integer()),
          services: Type.Array(Type.String()),
          customerId: Type.String(),
          propertyId: Nullable(Type.String()),
          customer: Type.Optional(CustomerSummary),
          property: Nullable(PropertySummary),
        },
        { additionalProperties: false },
      ),
    ),
    distanceKm: Type.Number({ description: 'Σ legs, km, 2 decimals' }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        date: '2026-05-05',
        stops: [
          {
            jobId: 'job_01JDYY909VFHTXJTQTNYRZYAKQ',
            routeOrder: 1,
            distanceKm: 3.2,
            status: 'scheduled',
            startTime: '08:30',
            durationMinutes: 45,
            services: ['Weekly mowing'],
            customerId: 'cus_01JDYY909VFHTXJTQTNYRZYAKA',
            propertyId: 'prp_01JDYY909VFHTXJTQTNYRZYAKB',
            customer: {
              id: 'cus_01JDYY909VFHTXJTQTNYRZYAKA',
              name: 'Ann Lee',
              company: null,
              email: 'ann.lee@example.com',
              phone: '(555) 010-2000',
              address: '12 Elm St, Springfield, IL 62701',
            },
            property: {
              id: 'prp_01JDYY909VFHTXJTQTNYRZYAKB',
              name: 'Home',
              address: '12 Elm St, Springfield, IL 62701',
              lat: 39.7817,
              lng: -89.6501,
            },
          },
        ],
        distanceKm: 4.65,
      },
    ],
  },
);
export const DayRouteResponse = Envelope(DayRoute);
