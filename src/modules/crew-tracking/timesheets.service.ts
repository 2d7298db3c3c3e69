import { and, eq, gt, isNull, lt, or, type SQL } from 'drizzle-orm';
import { timeEntries } from '../../db/schema/index.js';
import { addDays, daysBetween, startOfDayIn, today } from '../../platform/dates.js';
import { invalidField } from '../../platform/errors.js';
import type { Ctx } from '../../platform/tenancy.js';
import { organizationTimezone } from '../organizations/organizations.refs.js';
import { splitByDay } from './timesheets.split.js';

const MAX_DAYS = 92;

interface Day {
  memberId: string;
  userId: string;
  date: string;
  workMs: number;
  driveMs: number;
  mileage: number;
}

/**
 * Minutes per member and day in the organization's timezone. An entry crossing
 * midnight counts on each day it touches; an open entry counts up to now; mileage
 * counts on the day the drive started.
 */
export async function timesheets(ctx: Ctx, q: { from: string; to: string; memberId?: string | undefined }) {
  if (q.from > q.to) throw invalidField('from', 'must not be after to');
  if (daysBetween(q.from, q.to) + 1 > MAX_DAYS) throw invalidField('to', `the range is at most ${MAX_DAYS} days`);
  const tz = await organizationTimezone(ctx);
  const rangeStart = startOfDayIn(q.from, tz);
  const rangeEnd = startOfDayIn(addDays(q.to, 1), tz);
  const where: SQL[] = [
    eq(timeEntries.organizationId, ctx.organizationId),
    lt(timeEntries.startedAt, rangeEnd),
    or(isNull(timeEntries.endedAt), gt(timeEntries.endedAt, rangeStart)) as SQL,
  ];
  if (q.memberId) where.push(eq(timeEntries.memberId, q.memberId));
  const rows = await ctx.tx
    .select()
    .from(timeEntries)
    .where(and(...where));

  const now = new Date();
  const days = new Map<string, Day>();
  const dayOf = (memberId: string, userId: string, date: string) => {
    const key = `${memberId}|${date}`;
    let d = days.get(key);
    if (!d) {
      d = { memberId, userId, date, workMs: 0, driveMs: 0, mileage: 0 };
      days.set(key, d);
    }
    return d;
  };
  for (const e of rows) {
    const start = new Date(Math.max(e.startedAt.getTime(), rangeStart.getTime()));
    const endAt = e.endedAt ?? now;
    const end = new Date(Math.min(endAt.getTime(), rangeEnd.getTime()));
    for (const part of splitByDay(start, end, tz)) {
      const d = dayOf(e.memberId, e.userId, part.date);
      if (e.type === 'drive') d.driveMs += part.ms;
      else d.workMs += part.ms;
    }
    const startDate = today(tz, e.startedAt);
    if (e.mileage && startDate >= q.from && startDate <= q.to)
      dayOf(e.memberId, e.userId, startDate).mileage += e.mileage;
  }
  return [...days.values()]
    .map((d) => ({
      memberId: d.memberId,
      userId: d.userId,
      date: d.date,
      workMinutes: Math.round(d.workMs / 60_000),
      driveMinutes: Math.round(d.driveMs / 60_000),
      mileage: Math.round(d.mileage * 100) / 100,
    }))
    .sort((a, b) => (a.memberId === b.memberId ? a.date.localeCompare(b.date) : a.memberId.localeCompare(b.memberId)));
}
