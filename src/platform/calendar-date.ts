import { Type } from 'typebox';
import { isDateOnly, today } from './dates.js';
import { invalidField } from './errors.js';

/*
 * Request fields the spec calls an "ISO 8601 string" or a plain "string" but that are
 * stored as calendar dates (estimateDate, expirationDate, a job's scheduledDate, a
 * contract's startDate/endDate). They accept a date as it is, or a date-time with an
 * offset, which is an instant: it stands for the calendar day on which it falls in the
 * organization's timezone, as the list filters read their bounds. Fields the spec types
 * as "date" (invoiceDate, dueDate, paymentDate) stay date-only (`DateOnly`).
 */

const PATTERN = '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2}))?$';
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** A calendar-date request field that also takes an ISO 8601 date-time (see above). */
export const CalendarDateIn = (description?: string) =>
  Type.String({
    pattern: PATTERN,
    description: `${description ? `${description}. ` : ''}A date (YYYY-MM-DD), or an ISO 8601 date-time with an offset (Z or ±hh:mm), which is taken as its calendar date in the organization's timezone`,
    examples: ['2026-05-01', '2026-03-01T02:00:00Z'],
  });

/** The calendar date a request value names: a date as given, a date-time's day in `timezone`. */
export function calendarDateOf(field: string, value: string, timezone: string): string {
  if (isDateOnly(value)) return value;
  const ms = Date.parse(value);
  if (!DATE_TIME.test(value) || !isDateOnly(value.slice(0, 10)) || Number.isNaN(ms)) {
    throw invalidField(field, 'must be a date (YYYY-MM-DD) or an ISO 8601 date-time with an offset');
  }
  return today(timezone, new Date(ms));
}

/**
 * `input` with its calendar-date `fields` reduced to dates. The timezone is looked up
 * only when some field holds a date-time (or is not a valid date, to name the field).
 */
export async function withCalendarDates<T extends object>(
  input: T,
  fields: readonly (keyof T & string)[],
  timezone: () => Promise<string>,
): Promise<T> {
  const given = fields.filter((f) => typeof input[f] === 'string' && !isDateOnly(input[f] as string));
  if (given.length === 0) return input;
  const tz = await timezone();
  const out = { ...input };
  for (const f of given) (out as Record<string, unknown>)[f] = calendarDateOf(f, input[f] as string, tz);
  return out;
}
