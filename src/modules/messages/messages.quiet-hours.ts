import { TZDate } from '@date-fns/tz';
import { addDays, today } from '../../platform/dates.js';

const minutesOf = (hhmm: string) => {
  const [h, m] = hhmm.split(':').map(Number) as [number, number];
  return h * 60 + m;
};

/**
 * When an automatic text made at `now` may go (operations.md §10): inside the organization's
 * quiet hours (local time in `timezone`, a window that may span midnight), the end of the window;
 * otherwise null (at once).
 */
export function quietHoursEnd(now: Date, timezone: string, quiet: { start: string; end: string } | null): Date | null {
  if (!quiet) return null;
  const start = minutesOf(quiet.start);
  const end = minutesOf(quiet.end);
  if (start === end) return null;
  const local = new TZDate(now.getTime(), timezone);
  const minute = local.getHours() * 60 + local.getMinutes();
  const inside = start < end ? minute >= start && minute < end : minute >= start || minute < end;
  if (!inside) return null;
  const day = today(timezone, now);
  const endDay = minute < end ? day : addDays(day, 1);
  const [y, m, d] = endDay.split('-').map(Number) as [number, number, number];
  return new Date(new TZDate(y, m - 1, d, Math.floor(end / 60), end % 60, 0, 0, timezone).getTime());
}
