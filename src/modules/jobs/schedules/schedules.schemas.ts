import { Type } from 'typebox';
import { CalendarDateIn } from '../../../platform/calendar-date.js';
import { StringEnum } from '../../../platform/enum.js';
import { DateOnly, DateTime, Envelope, exampleOf, Money, Nullable, PageQuery } from '../../../platform/schemas.js';
import { LineItemInput, MAX_LINE_ITEMS, UnnumberedLineItem } from '../../billing/line-items.js';
import { DurationMinutes, JobDetail, StartTime } from '../jobs.schemas.js';
import { SCHEDULE_STATUSES } from './schedules.states.js';

const IdString = (description: string) => Type.String({ minLength: 1, maxLength: 64, description });

const Rrule = Type.String({
  minLength: 1,
  maxLength: 500,
  description:
    'An RFC 5545 RRULE without DTSTART, e.g. FREQ=WEEKLY;BYDAY=TU. Parts: FREQ (DAILY, WEEKLY, MONTHLY), INTERVAL, BYDAY, BYMONTHDAY, BYMONTH, COUNT, UNTIL; anything else → 400',
  examples: ['FREQ=WEEKLY;BYDAY=TU'],
});
const AssignedTo = Type.Array(IdString('A team member: the userId from GET /api/members'), {
  maxItems: 50,
  uniqueItems: true,
  description: 'Team member user ids copied onto each visit',
});
const Checklist = Type.Array(Type.String({ minLength: 1, maxLength: 500, pattern: '\\S' }), {
  maxItems: 100,
  description: 'Checklist item texts copied onto each visit, in order',
});
const Notes = Type.String({ maxLength: 10_000, description: 'Instructions for the crew, copied onto each visit' });
const LineItems = Type.Array(LineItemInput, {
  maxItems: MAX_LINE_ITEMS,
  description: 'The price of one visit; money and rounding exactly as invoice lines',
});

const AutoSend = Type.Optional(Type.Boolean({ description: 'Send the invoice as soon as it is made' }));
/** How the visits are billed (operations.md §9). Stored and shown; acted on by billing. */
export const BillingIn = Type.Union(
  [
    Type.Object(
      { mode: Type.Literal('per_visit', { description: 'Completing a visit makes its invoice' }), autoSend: AutoSend },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        mode: Type.Literal('batch', { description: 'The completed visits of a month, one invoice per customer' }),
        autoSend: AutoSend,
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        mode: Type.Literal('installments', { description: 'Fixed invoices on their dates, whatever the visits' }),
        amounts: Type.Optional(
          Type.Array(Money('One installment'), {
            minItems: 1,
            maxItems: 120,
            description: 'As many as count; default: the contract value (or lines × occurrences) split evenly',
          }),
        ),
        count: Type.Integer({ minimum: 1, maximum: 120 }),
        firstDate: CalendarDateIn('The first installment’s date'),
        every: Type.Literal('month'),
      },
      { additionalProperties: false },
    ),
    Type.Object({ mode: Type.Literal('none') }, { additionalProperties: false }),
  ],
  { description: 'per_visit | batch | installments | none' },
);

const BillingOut = Type.Object(
  {
    mode: StringEnum(['per_visit', 'batch', 'installments', 'none'] as const),
    autoSend: Type.Optional(Type.Boolean()),
    amounts: Type.Optional(Type.Array(Type.Number())),
    count: Type.Optional(Type.Integer()),
    firstDate: Type.Optional(DateOnly()),
    every: Type.Optional(Type.Literal('month')),
  },
  { additionalProperties: false },
);

const LineOut = UnnumberedLineItem();

export const Schedule = Type.Object(
  {
    id: Type.String({ description: 'sch_…' }),
    customerId: Type.String(),
    propertyId: Nullable(Type.String()),
    contractId: Nullable(Type.String({ description: 'The contract whose term the schedule follows' })),
    title: Type.String(),
    rrule: Type.String(),
    startDate: DateOnly('DTSTART: the first date the rule may fall on'),
    endDate: Nullable(DateOnly('The last date a visit may fall on (inclusive); null = open-ended')),
    startTime: Nullable(Type.String({ description: 'HH:mm local' })),
    durationMinutes: Nullable(Type.Integer()),
    assignedTo: Type.Array(Type.String()),
    crewId: Nullable(Type.String()),
    lineItems: Type.Array(LineOut),
    total: Type.Number({ description: 'Σ line amounts of one visit' }),
    checklist: Type.Array(Type.String()),
    notes: Nullable(Type.String()),
    billing: BillingOut,
    status: StringEnum(SCHEDULE_STATUSES, 'active | paused | ended'),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: 'sch_0mws9k2c1f8r3n5t7v9x1z3b5d',
        customerId: 'cus_01JD8Q5M2XH7Z4W9K3T6R1B0NA',
        propertyId: 'prp_01JD8Q7A4C2E6G8J0L2N4Q6S8U',
        contractId: null,
        title: 'Weekly mowing',
        rrule: 'FREQ=WEEKLY;BYDAY=TU',
        startDate: '2026-04-01',
        endDate: '2026-10-31',
        startTime: '08:00',
        durationMinutes: 45,
        assignedTo: [],
        crewId: null,
        lineItems: [
          { serviceId: null, description: 'Weekly mowing', quantity: 1, unitPrice: 45, taxable: true, amount: 45 },
        ],
        total: 45,
        checklist: ['Mow', 'Edge', 'Blow off walks'],
        notes: 'Gate code 1234',
        billing: { mode: 'batch' },
        status: 'active',
        createdAt: '2026-03-20T15:00:00.000Z',
        updatedAt: '2026-03-20T15:00:00.000Z',
      },
    ],
  },
);

export const ScheduleDetail = Type.Object(
  {
    ...Schedule.properties,
    nextOccurrences: Type.Array(DateOnly(), {
      description: 'The next 10 occurrence dates from today (skipped ones included), ascending',
    }),
    skippedDates: Type.Array(DateOnly(), {
      description:
        'Which of nextOccurrences have no visit to come: skipped (POST …/skip) or their visit deleted; ascending',
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        ...exampleOf(Schedule),
        nextOccurrences: ['2026-04-07', '2026-04-14', '2026-04-21'],
        skippedDates: ['2026-04-14'],
      },
    ],
  },
);

export const CreateScheduleBody = Type.Object(
  {
    customerId: IdString('The customer'),
    propertyId: Type.Optional(IdString('A property of that customer')),
    contractId: Type.Optional(
      IdString('A contract of that customer: the schedule waits for it to be active and ends with it'),
    ),
    title: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }),
    rrule: Rrule,
    startDate: CalendarDateIn('DTSTART: the first date the rule may fall on'),
    endDate: Type.Optional(CalendarDateIn('The last date a visit may fall on (inclusive)')),
    startTime: Type.Optional(StartTime()),
    durationMinutes: Type.Optional(DurationMinutes()),
    assignedTo: Type.Optional(AssignedTo),
    crewId: Type.Optional(IdString('A crew (GET /api/crew-tracking/crews)')),
    lineItems: Type.Optional(LineItems),
    checklist: Type.Optional(Checklist),
    notes: Type.Optional(Notes),
    billing: BillingIn,
  },
  {
    additionalProperties: false,
    examples: [
      {
        customerId: 'cus_01JD8Q5M2XH7Z4W9K3T6R1B0NA',
        title: 'Weekly mowing',
        rrule: 'FREQ=WEEKLY;BYDAY=TU',
        startDate: '2026-04-01',
        endDate: '2026-10-31',
        startTime: '08:00',
        lineItems: [{ description: 'Weekly mowing', quantity: 1, unitPrice: 45 }],
        billing: { mode: 'batch' },
      },
    ],
  },
);

export const UpdateScheduleBody = Type.Object(
  {
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' })),
    rrule: Type.Optional(Rrule),
    endDate: Type.Optional(Nullable(CalendarDateIn('The last date (inclusive); null = open-ended'))),
    startTime: Type.Optional(Nullable(StartTime())),
    durationMinutes: Type.Optional(Nullable(DurationMinutes())),
    assignedTo: Type.Optional(AssignedTo),
    crewId: Type.Optional(Nullable(IdString('A crew, or null'))),
    lineItems: Type.Optional(LineItems),
    checklist: Type.Optional(Checklist),
    notes: Type.Optional(Nullable(Notes)),
    billing: Type.Optional(BillingIn),
  },
  {
    additionalProperties: false,
    description:
      'Changes apply forward: visits still scheduled, from today on, not invoiced and not edited one by one are rewritten (or removed, when no longer an occurrence); others never change.',
  },
);

export const EndScheduleBody = Nullable(
  Type.Object(
    { endDate: Type.Optional(CalendarDateIn('The last date with a visit (inclusive); default today')) },
    { additionalProperties: false },
  ),
);
export const SkipBody = Type.Object(
  { date: CalendarDateIn('An occurrence date of the schedule') },
  { additionalProperties: false },
);

export const ScheduleListQuery = Type.Object(
  {
    status: Type.Optional(StringEnum(SCHEDULE_STATUSES)),
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    contractId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    ...PageQuery,
  },
  { additionalProperties: false },
);

const VisitCounts = Type.Object(
  {
    updated: Type.Integer({ minimum: 0, description: 'Visits rewritten in place (same job ids)' }),
    added: Type.Integer({ minimum: 0, description: 'Visits made' }),
    removed: Type.Integer({ minimum: 0, description: 'Visits canceled (job.cancelled), never deleted' }),
  },
  { additionalProperties: false },
);
export const ScheduleChange = Type.Object(
  { schedule: ScheduleDetail, visits: VisitCounts },
  {
    additionalProperties: false,
    examples: [{ schedule: exampleOf(ScheduleDetail), visits: { updated: 7, added: 0, removed: 1 } }],
  },
);
export const SkipResult = Type.Union([
  JobDetail,
  Type.Object(
    { date: DateOnly(), skipped: Type.Literal(true, { description: 'Recorded: that date will not be made' }) },
    { additionalProperties: false },
  ),
]);

export const ScheduleResponse = Envelope(ScheduleDetail);
export const ScheduleListResponse = Envelope(Type.Array(Schedule));
export const ScheduleChangeResponse = Envelope(ScheduleChange);
export const SkipResponse = Envelope(SkipResult);
