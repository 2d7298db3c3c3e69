import { isDateOnly, today } from '../../platform/dates.js';
import { invalidField } from '../../platform/errors.js';

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * A list bound on a date-only column (invoiceDate). A date is used as given: it
 * already means that whole calendar day in the organization's timezone. A
 * date-time is an instant, and the only way to compare an instant with a calendar
 * date is to ask which day it falls on in the organization's timezone; that day is
 * then included (both bounds are inclusive). A date-time without an offset is
 * refused: it names no instant.
 */
export function calendarBound(field: string, value: string, timezone: string): string {
  if (isDateOnly(value)) return value;
  const ms = Date.parse(value);
  if (!DATE_TIME.test(value) || Number.isNaN(ms)) {
    throw invalidField(field, 'must be a date (YYYY-MM-DD) or an ISO 8601 date-time with an offset');
  }
  return today(timezone, new Date(ms));
}

/** `startDate` wins over `dateFrom`, `endDate` over `dateTo` (spec 4.2). */
export function dateRange(
  q: {
    startDate?: string | undefined;
    dateFrom?: string | undefined;
    endDate?: string | undefined;
    dateTo?: string | undefined;
  },
  timezone: string,
): { from: string | undefined; to: string | undefined } {
  const fromField = q.startDate !== undefined ? 'startDate' : 'dateFrom';
  const toField = q.endDate !== undefined ? 'endDate' : 'dateTo';
  const fromRaw = q.startDate ?? q.dateFrom;
  const toRaw = q.endDate ?? q.dateTo;
  return {
    from: fromRaw === undefined ? undefined : calendarBound(fromField, fromRaw, timezone),
    to: toRaw === undefined ? undefined : calendarBound(toField, toRaw, timezone),
  };
}
