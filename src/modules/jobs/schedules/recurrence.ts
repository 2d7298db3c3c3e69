import rrulePkg from 'rrule';
import { invalidField } from '../../../platform/errors.js';

// rrule ships CommonJS; Node's ESM loader sees only its default export.
const { RRule } = rrulePkg;

/*
 * Occurrences of a schedule: RFC 5545 RRULEs expanded by the `rrule` library over
 * calendar dates. Dates are "floating": every date is represented as UTC midnight
 * and never converted, so an occurrence is a date in the organization's timezone and
 * daylight saving cannot move it (the local start time is applied to each date
 * separately, by PostgreSQL, when a visit is written).
 */

/** The rule parts operations.md §9 supports; everything else is refused by name. */
const SUPPORTED = new Set(['FREQ', 'INTERVAL', 'BYDAY', 'BYMONTHDAY', 'BYMONTH', 'COUNT', 'UNTIL']);
const FREQS = new Set(['DAILY', 'WEEKLY', 'MONTHLY']);
const WEEKDAY = /^([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$/;
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const INT = /^\d{1,4}$/;

/** A rule must have an occurrence within this many years of its start. */
const SEARCH_YEARS = 5;

const toUtc = (date: string) => new Date(`${date}T00:00:00.000Z`);
const toDate = (d: Date) => d.toISOString().slice(0, 10);

export interface Recurrence {
  /** Occurrence dates from `from` to `to`, both inclusive, ascending. */
  between(from: string, to: string): string[];
  /** The next `n` occurrence dates on or after `from`. */
  next(n: number, from: string): string[];
  /** Whether `date` is an occurrence. */
  includes(date: string): boolean;
  /** How many occurrences there are in all; null when the rule never ends (no COUNT, UNTIL or endDate). */
  total(): number | null;
}

function checkList(field: string, part: string, value: string, ok: (v: string) => boolean) {
  for (const item of value.split(',')) {
    if (!ok(item)) throw invalidField(field, `${part} value "${item}" is not valid`);
  }
}

/** Parses and checks `rule` (without DTSTART); a refusal names the part. */
function parse(rule: string, field: string): Record<string, string> {
  const body = rule.trim().replace(/^RRULE:/i, '');
  const parts: Record<string, string> = {};
  for (const piece of body.split(';')) {
    if (piece === '') continue;
    const eq = piece.indexOf('=');
    const key = (eq < 0 ? piece : piece.slice(0, eq)).trim().toUpperCase();
    const value =
      eq < 0
        ? ''
        : piece
            .slice(eq + 1)
            .trim()
            .toUpperCase();
    if (!SUPPORTED.has(key)) {
      throw invalidField(field, `${key || piece} is not supported (use ${[...SUPPORTED].join(', ')})`);
    }
    if (key in parts) throw invalidField(field, `${key} is given twice`);
    if (value === '') throw invalidField(field, `${key} has no value`);
    parts[key] = value;
  }
  if (!parts.FREQ) throw invalidField(field, 'FREQ is required (DAILY, WEEKLY or MONTHLY)');
  if (!FREQS.has(parts.FREQ)) throw invalidField(field, `FREQ=${parts.FREQ} is not supported (DAILY, WEEKLY, MONTHLY)`);
  if (parts.COUNT && parts.UNTIL) throw invalidField(field, 'COUNT and UNTIL cannot both be given');
  for (const key of ['INTERVAL', 'COUNT'] as const) {
    const v = parts[key];
    if (v !== undefined && (!INT.test(v) || Number(v) < 1))
      throw invalidField(field, `${key} must be a positive integer`);
  }
  if (parts.BYDAY) {
    checkList(field, 'BYDAY', parts.BYDAY, (v) => {
      const m = WEEKDAY.exec(v);
      if (!m) return false;
      // An ordinal ("1MO": the first Monday) only means something within a month.
      if (m[1] === undefined) return true;
      const n = Math.abs(Number(m[1]));
      return parts.FREQ === 'MONTHLY' && n >= 1 && n <= 5;
    });
  }
  if (parts.BYMONTHDAY) {
    checkList(field, 'BYMONTHDAY', parts.BYMONTHDAY, (v) => {
      const n = Number(v);
      return /^[+-]?\d{1,2}$/.test(v) && n !== 0 && Math.abs(n) <= 31;
    });
  }
  if (parts.BYMONTH) {
    checkList(field, 'BYMONTH', parts.BYMONTH, (v) => /^\d{1,2}$/.test(v) && Number(v) >= 1 && Number(v) <= 12);
  }
  if (parts.BYMONTHDAY) {
    // rrule walks an impossible day-of-month (February 30th) to the year 9999, for
    // seconds: such a rule is refused before it is expanded. Weekdays fall on every
    // date over the years, so only months and days of the month can be at odds.
    const months = parts.BYMONTH ? parts.BYMONTH.split(',').map(Number) : [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
    const days = parts.BYMONTHDAY.split(',').map((d) => Math.abs(Number(d)));
    if (!months.some((m) => days.some((d) => d <= (DAYS_IN_MONTH[m - 1] as number)))) {
      throw invalidField(field, `has no occurrence: BYMONTHDAY=${parts.BYMONTHDAY} never falls in BYMONTH=${months}`);
    }
  }
  if (parts.UNTIL && !/^\d{8}(T\d{6}Z?)?$/.test(parts.UNTIL)) {
    throw invalidField(field, 'UNTIL must be a date such as 20261031');
  }
  return parts;
}

/** UNTIL's calendar date (its date part, inclusive), as YYYY-MM-DD. */
const untilDate = (v: string) => `${v.slice(0, 4)}-${v.slice(4, 6)}-${v.slice(6, 8)}`;

/**
 * The schedule's recurrence: `rule` from `startDate` (DTSTART; not itself an
 * occurrence unless it matches), bounded by `endDate` (inclusive). Refuses an
 * unsupported or malformed rule, and one without any occurrence, with 400 on `field`.
 */
export function recurrence(rule: string, startDate: string, endDate: string | null, field = 'rrule'): Recurrence {
  const parts = parse(rule, field);
  const bodyWithoutUntil = Object.entries(parts)
    .filter(([k]) => k !== 'UNTIL')
    .map(([k, v]) => `${k}=${v}`)
    .join(';');
  let last = endDate;
  if (parts.UNTIL) {
    const u = untilDate(parts.UNTIL);
    if (Number.isNaN(toUtc(u).getTime()) || toDate(toUtc(u)) !== u)
      throw invalidField(field, 'UNTIL is not a real date');
    if (last === null || u < last) last = u;
  }
  let options: ConstructorParameters<typeof RRule>[0];
  try {
    options = RRule.parseString(bodyWithoutUntil);
  } catch (err) {
    throw invalidField(field, (err as Error).message);
  }
  const rule$ = new RRule({
    ...options,
    dtstart: toUtc(startDate),
    ...(last !== null ? { until: toUtc(last) } : {}),
  });
  // Looked for within a bounded window: an impossible rule (DAILY in February on the
  // 31st) would otherwise be walked day by day to the year 9999, for seconds.
  const windowEnd = `${Number(startDate.slice(0, 4)) + SEARCH_YEARS}${startDate.slice(4)}`;
  const probeEnd = last !== null && last < windowEnd ? last : windowEnd;
  const probe = new RRule({ ...options, dtstart: toUtc(startDate), until: toUtc(probeEnd), count: null });
  if (probe.after(toUtc(startDate), true) === null) {
    throw invalidField(
      field,
      `has no occurrence from ${startDate}${last !== null && last < windowEnd ? ` to ${last}` : ` within ${SEARCH_YEARS} years`}`,
    );
  }
  return {
    between: (from, to) => (from > to ? [] : rule$.between(toUtc(from), toUtc(to), true).map(toDate)),
    next(n, from) {
      const out: string[] = [];
      for (let d = rule$.after(toUtc(from), true); d !== null && out.length < n; d = rule$.after(d, false)) {
        out.push(toDate(d));
      }
      return out;
    },
    includes: (date) => rule$.between(toUtc(date), toUtc(date), true).length > 0,
    total: () => (last !== null || parts.COUNT ? rule$.all().length : null),
  };
}

/** A recurrence with no occurrence: a schedule ended before its first visit. */
const NO_OCCURRENCE: Recurrence = { between: () => [], next: () => [], includes: () => false, total: () => 0 };

/**
 * The recurrence of a stored schedule. A schedule may be ended before its first visit
 * (its endDate then falls before every occurrence, even before startDate): that is a
 * schedule with no occurrence, not a malformed one. The rule itself was checked when
 * the schedule was written, so only the endDate can empty it.
 */
export function storedRecurrence(rule: string, startDate: string, endDate: string | null): Recurrence {
  if (endDate !== null && endDate < startDate) return NO_OCCURRENCE;
  try {
    return recurrence(rule, startDate, endDate);
  } catch (err) {
    if (endDate === null) throw err;
    recurrence(rule, startDate, null);
    return NO_OCCURRENCE;
  }
}
