import { TZDate } from '@date-fns/tz';
// Per-function entry points: the package root loads all of date-fns (about 300 modules, 0.25 s of CPU at start).
import { addDays as addDaysFns } from 'date-fns/addDays';
import { format } from 'date-fns/format';
import { invalidField } from './errors.js';

/*
 * Calendar dates (`YYYY-MM-DD`) are plain strings; "today" and day boundaries are
 * computed in the organization's IANA timezone (decisions §3). @date-fns/tz does
 * the timezone arithmetic, DST included.
 */

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export function isValidTimeZone(tz: string): boolean {
  if (!tz || tz.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** True for a real calendar date in YYYY-MM-DD form (rejects 2026-02-30). */
export function isDateOnly(value: string): boolean {
  const m = DATE.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const dt = new Date(Date.UTC(y, mo - 1, d));
  return dt.getUTCFullYear() === y && dt.getUTCMonth() === mo - 1 && dt.getUTCDate() === d;
}

/** Today's date in `timezone`. */
export function today(timezone: string, now: Date = new Date()): string {
  return format(new TZDate(now.getTime(), timezone), 'yyyy-MM-dd');
}

/** `date` plus `days` calendar days. */
export function addDays(date: string, days: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return format(addDaysFns(new Date(y, m - 1, d), days), 'yyyy-MM-dd');
}

/** Whole days from `a` to `b` (b − a). */
export function daysBetween(a: string, b: string): number {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / 86_400_000);
}

/** The instant a calendar day starts in `timezone`. */
export function startOfDayIn(date: string, timezone: string): Date {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(new TZDate(y, m - 1, d, 0, 0, 0, 0, timezone).getTime());
}

/**
 * A range filter bound (spec 4.2/4.3): a date-only value means that whole calendar
 * day in the organization's timezone, a date-time is an instant. Returns a
 * half-open bound: `from` inclusive, `to` exclusive (the start of the next day for
 * a date-only end, so "through the end of that day" holds exactly).
 */
export function rangeBound(field: string, value: string, timezone: string, side: 'from' | 'to'): Date {
  if (isDateOnly(value)) {
    return startOfDayIn(side === 'from' ? value : addDays(value, 1), timezone);
  }
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(ms)) {
    throw invalidField(field, 'must be a date (YYYY-MM-DD) or an ISO 8601 date-time');
  }
  return new Date(side === 'to' ? ms + 1 : ms);
}

let lastStamp = 0;
/**
 * Now, strictly increasing in this process: several activity entries written by one change
 * (jobs, contracts) keep their order when sorted by time.
 */
export function stamp(): Date {
  lastStamp = Math.max(Date.now(), lastStamp + 1);
  return new Date(lastStamp);
}
