import { type Static, Type } from 'typebox';
import { DateOnly, DateTime, Envelope, Nullable, PageQuery } from '../../platform/schemas.js';
import { MemberId } from './crews.schemas.js';

export const Lat = Type.Number({ minimum: -90, maximum: 90, description: 'Latitude, −90..90' });
export const Lng = Type.Number({ minimum: -180, maximum: 180, description: 'Longitude, −180..180' });
export const Point = Type.Object({ lat: Lat, lng: Lng }, { additionalProperties: false });

export const EntryType = Type.Union([Type.Literal('work'), Type.Literal('drive')], {
  description: 'work: time on a job; drive: travel (a mileage log, no webhook)',
});
const Mileage = Type.Number({ minimum: 0, maximum: 100_000, description: 'Miles driven (drive entries only)' });
const Instant = (description: string) => Type.String({ format: 'date-time', description });

const Edit = Type.Object(
  {
    at: Type.String({ description: 'When the correction was made' }),
    actorId: Type.String({ description: 'User or API key id of who made it' }),
    changes: Type.Record(Type.String(), Type.Object({ from: Type.Unknown(), to: Type.Unknown() }), {
      description: 'Each changed field with its old and new value',
    }),
  },
  { additionalProperties: false },
);

export const TimeEntry = Type.Object(
  {
    id: Type.String({ description: 'tme_…' }),
    memberId: Type.String({ description: 'mem_…' }),
    userId: Type.String(),
    jobId: Nullable(Type.String()),
    type: EntryType,
    startedAt: DateTime(),
    endedAt: Nullable(DateTime('Null while clocked in')),
    durationMinutes: Nullable(Type.Integer({ description: 'Whole minutes, rounded; null while open' })),
    mileage: Nullable(Type.Number()),
    startLocation: Nullable(Point),
    endLocation: Nullable(Point),
    edits: Type.Array(Edit, { description: 'Corrections, oldest first' }),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  { additionalProperties: false },
);

export const ClockInBody = Type.Object(
  {
    memberId: Type.Optional(MemberId('Who clocks in; default the caller. Another member needs owner/admin')),
    jobId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The job worked on (job_…)' })),
    type: Type.Optional(EntryType),
    at: Type.Optional(Instant('Start time; default now. At most 5 minutes in the future')),
    location: Type.Optional(Point),
  },
  { additionalProperties: false },
);
export type ClockInInput = Static<typeof ClockInBody>;

export const ClockOutBody = Type.Object(
  {
    memberId: Type.Optional(MemberId('Who clocks out; default the caller. Another member needs owner/admin')),
    at: Type.Optional(Instant('End time; default now; not before the start')),
    location: Type.Optional(Point),
    mileage: Type.Optional(Mileage),
  },
  { additionalProperties: false },
);
export type ClockOutInput = Static<typeof ClockOutBody>;

export const UpdateTimeEntryBody = Type.Object(
  {
    startedAt: Type.Optional(Instant('Corrected start')),
    endedAt: Type.Optional(
      Instant('Corrected end (closes nothing new: only for entries already closed or to fix one)'),
    ),
    type: Type.Optional(EntryType),
    jobId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64 }))),
    mileage: Type.Optional(Nullable(Mileage)),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateTimeEntryInput = Static<typeof UpdateTimeEntryBody>;

export const TimeEntryListQuery = Type.Object(
  {
    ...PageQuery,
    memberId: Type.Optional(MemberId()),
    jobId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    type: Type.Optional(EntryType),
    from: Type.Optional(Type.String({ description: 'startedAt from: a date (whole day, org timezone) or date-time' })),
    to: Type.Optional(Type.String({ description: 'startedAt to: a date (through that day) or date-time' })),
  },
  { additionalProperties: false },
);
export type TimeEntryFilters = Static<typeof TimeEntryListQuery>;

export const TimesheetQuery = Type.Object(
  {
    from: DateOnly('First day, inclusive'),
    to: DateOnly('Last day, inclusive; at most 92 days after from'),
    memberId: Type.Optional(MemberId()),
  },
  { additionalProperties: false },
);

export const TimesheetDay = Type.Object(
  {
    memberId: Type.String(),
    userId: Type.String(),
    date: Type.String({ description: 'Day in the organization timezone, YYYY-MM-DD' }),
    workMinutes: Type.Integer(),
    driveMinutes: Type.Integer(),
    mileage: Type.Number({ description: 'Miles of drive entries started that day' }),
  },
  { additionalProperties: false },
);

export const TimeEntryResponse = Envelope(TimeEntry);
export const TimeEntryList = Envelope(Type.Array(TimeEntry));
export const TimesheetResponse = Envelope(Type.Array(TimesheetDay));
