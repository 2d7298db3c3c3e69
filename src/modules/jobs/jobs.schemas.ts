import { Type } from 'typebox';
import { CalendarDateIn } from '../../platform/calendar-date.js';
import { DateOnly, DateTime, Envelope, exampleOf, Nullable, PageQuery } from '../../platform/schemas.js';
import { JOB_STATUSES } from './jobs.states.js';

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
    createdAt: DateTime(),
    updatedAt: DateTime(),
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
        'created | published | status_changed | rescheduled | assigned | notes_updated | updated | checklist_item_completed | checklist_item_uncompleted',
    }),
    message: Type.String({ description: 'Human-readable description of the change' }),
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
  },
  {
    additionalProperties: false,
    description:
      'Partial update. A completed or canceled job accepts only `notes`; a draft accepts every field but `status` (publish it instead).',
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

export const JobListQuery = Type.Object(
  {
    status: Type.Optional(JobStatusSchema),
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    assignedTo: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'A team member user id' })),
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
    status: Type.Optional(JobStatusSchema),
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    assignedTo: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
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
export const JobListResponse = Envelope(Type.Array(Job));
export const CalendarResponse = Envelope(
  Type.Array(CalendarDay, { description: 'One entry per date that has jobs, ascending' }),
);
