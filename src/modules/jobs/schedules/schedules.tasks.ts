import { and, eq, inArray, sql } from 'drizzle-orm';
import type { WorkerTask } from '../../../background/runner.js';
import type { Db } from '../../../db/client.js';
import { rowsOf } from '../../../db/client.js';
import { jobSchedules } from '../../../db/schema/index.js';
import { asPlatform, perOrganization } from '../../../platform/cross-tenant.js';
import { addDays } from '../../../platform/dates.js';
import { systemActor } from '../../../platform/tenancy.js';
import { SETTINGS_DEFAULTS } from '../../settings/settings.service.js';
import { plannedDates, ruleOf, type ScheduleRow, scheduleContext } from './schedules.service.js';
import { makeVisits } from './schedules.visits.js';

const SYSTEM = systemActor('schedule-horizon');
const BATCH = 500;

/**
 * Active schedules whose visits do not reach their organization's horizon yet
 * (today + visitHorizonDays in its timezone), across organizations, in one
 * statement: when every schedule is current this is the whole daily pass.
 */
async function dueSchedules(db: Db, now: Date, limit: number) {
  const today = sql`(${now.toISOString()}::timestamptz AT TIME ZONE o.timezone)::date`;
  const horizon = sql`COALESCE((o.settings->>'visitHorizonDays')::int, ${SETTINGS_DEFAULTS.visitHorizonDays})`;
  return rowsOf<{ id: string; organization_id: string }>(
    await asPlatform(db, (tx) =>
      tx.execute(sql`
        SELECT s.id, s.organization_id FROM job_schedules s
        JOIN organizations o ON o.id = s.organization_id
        WHERE s.status = 'active'
          AND (s.generated_through IS NULL OR s.generated_through < ${today} + ${horizon})
          AND (s.end_date IS NULL OR s.generated_through IS NULL OR s.generated_through < s.end_date)
        ORDER BY s.generated_through NULLS FIRST, s.id
        LIMIT ${limit}`),
    ),
  );
}

/**
 * Extends the visits of due schedules to the horizon: per organization, the batch's
 * schedules are claimed with FOR UPDATE SKIP LOCKED (another worker takes the
 * others), their visits made in one statement and their mark moved in another, so
 * a batch costs the same few statements whatever its size. The unique visit key
 * keeps this exact even if two passes overlap. Returns the schedules handled.
 */
export async function extendScheduleHorizons(db: Db, now: Date = new Date(), limit = BATCH): Promise<number> {
  return perOrganization(db, await dueSchedules(db, now, limit), SYSTEM, async (ctx, ids) => {
    const organizationId = ctx.organizationId;
    const w = await scheduleContext(ctx, now);
    const claimed: ScheduleRow[] = await ctx.tx
      .select()
      .from(jobSchedules)
      .where(
        and(
          eq(jobSchedules.organizationId, organizationId),
          inArray(jobSchedules.id, ids),
          eq(jobSchedules.status, 'active'),
        ),
      )
      .for('update', { skipLocked: true });
    if (claimed.length === 0) return 0;
    // Schedules of one organization mostly share their rule and dates (a season's
    // contracts): each distinct rule is expanded once per batch, not once per schedule.
    const expanded = new Map<string, string[]>();
    const plans = claimed.map((r) => {
      // Only the days past what was made already: earlier ones exist, or were removed on purpose.
      const from = r.generatedThrough === null ? w.today : addDays(r.generatedThrough, 1);
      const key = `${r.rrule}|${r.startDate}|${r.endDate}|${from}`;
      let dates = expanded.get(key);
      if (dates === undefined) {
        dates = plannedDates(ruleOf(r), r, w, from);
        expanded.set(key, dates);
      }
      return { scheduleId: r.id, dates };
    });
    await makeVisits(ctx, plans, w.timezone);
    await ctx.tx
      .update(jobSchedules)
      .set({ generatedThrough: w.horizonEnd })
      .where(
        and(
          eq(jobSchedules.organizationId, organizationId),
          inArray(
            jobSchedules.id,
            claimed.map((r) => r.id),
          ),
        ),
      );
    return claimed.length;
  });
}

export const scheduleHorizonTask: WorkerTask = {
  name: 'schedule-horizon',
  // Hourly is "at least daily" with margin: a pass over current schedules is one query.
  intervalMs: 60 * 60_000,
  run: ({ database }) => extendScheduleHorizons(database.db),
};
