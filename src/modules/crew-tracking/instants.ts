import { invalidField } from '../../platform/errors.js';

/** Phones' clocks drift; more than this ahead of the server is a wrong clock, not a real time. */
export const FUTURE_TOLERANCE_MS = 5 * 60_000;

/** A request's date-time, or now; refused when more than 5 minutes in the future. */
export function instantOf(field: string, value: string | undefined, now = new Date()): Date {
  if (value === undefined) return now;
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw invalidField(field, 'must be an ISO 8601 date-time');
  if (at.getTime() > now.getTime() + FUTURE_TOLERANCE_MS) {
    throw invalidField(field, 'is more than 5 minutes in the future');
  }
  return at;
}
