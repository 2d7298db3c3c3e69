import { daysBetween, isDateOnly, today } from '../../platform/dates.js';
import { invalidField } from '../../platform/errors.js';

/**
 * A bound of a scheduled-date filter as a calendar date. `scheduledDate` is a
 * date column, so a date-only bound is used as is (the whole day, in the
 * organization's timezone by definition), and a date-time bound becomes the
 * calendar date on which that instant falls in the organization's timezone.
 * Both bounds are then inclusive.
 */
export function filterDate(field: string, value: string, timezone: string): string {
  if (isDateOnly(value)) return value;
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value) || Number.isNaN(ms)) {
    throw invalidField(field, 'must be a date (YYYY-MM-DD) or an ISO 8601 date-time');
  }
  return today(timezone, new Date(ms));
}

export interface DateRange {
  from?: string | undefined;
  to?: string | undefined;
}

/** Resolves the list's bounds and aliases (startDate wins over from, endDate over to). */
export function resolveRange(
  q: {
    startDate?: string | undefined;
    from?: string | undefined;
    endDate?: string | undefined;
    to?: string | undefined;
  },
  timezone: string,
): DateRange {
  const startField = q.startDate !== undefined ? 'startDate' : 'from';
  const endField = q.endDate !== undefined ? 'endDate' : 'to';
  const start = q.startDate ?? q.from;
  const end = q.endDate ?? q.to;
  const range: DateRange = {
    from: start === undefined ? undefined : filterDate(startField, start, timezone),
    to: end === undefined ? undefined : filterDate(endField, end, timezone),
  };
  if (range.from && range.to && range.to < range.from) {
    throw invalidField(endField, `must not be before ${startField}`);
  }
  return range;
}

export const CALENDAR_MAX_DAYS = 92;

/** The calendar's range: both bounds, end ≥ start, at most 92 days counting both ends. */
export function calendarRange(startDate: string, endDate: string, timezone: string): { from: string; to: string } {
  const from = filterDate('startDate', startDate, timezone);
  const to = filterDate('endDate', endDate, timezone);
  if (to < from) throw invalidField('endDate', 'must not be before startDate');
  if (daysBetween(from, to) + 1 > CALENDAR_MAX_DAYS) {
    throw invalidField('endDate', `the range may span at most ${CALENDAR_MAX_DAYS} days`);
  }
  return { from, to };
}
