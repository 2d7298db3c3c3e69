import { addDays, startOfDayIn, today } from '../../platform/dates.js';

/**
 * Splits [start, end) into the calendar days of `timezone` it touches, with the
 * milliseconds on each. Day boundaries are the real instants of local midnight,
 * so a DST day counts 23 or 25 hours, never a fixed 24.
 */
export function splitByDay(start: Date, end: Date, timezone: string): Array<{ date: string; ms: number }> {
  const out: Array<{ date: string; ms: number }> = [];
  let date = today(timezone, start);
  let cursor = start.getTime();
  const stop = end.getTime();
  while (cursor < stop) {
    const next = startOfDayIn(addDays(date, 1), timezone).getTime();
    const until = Math.min(next, stop);
    out.push({ date, ms: until - cursor });
    cursor = until;
    date = addDays(date, 1);
  }
  return out;
}
