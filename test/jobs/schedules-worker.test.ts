import { asc, count, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { jobSchedules, jobs } from '../../src/db/schema/index.js';
import { extendScheduleHorizons } from '../../src/modules/jobs/schedules/schedules.tasks.js';
import { makeVisits } from '../../src/modules/jobs/schedules/schedules.visits.js';
import { addDays, today as todayIn } from '../../src/platform/dates.js';
import { inTenant, systemActor } from '../../src/platform/tenancy.js';
import { DAY, TZ, useScheduleTenant, weekdays } from './schedules-fixture.js';

describe('schedule horizon worker', () => {
  const t = useScheduleTenant();

  const visitDates = async (scheduleId: string) =>
    (
      await t.h.admin.db
        .select({ d: jobs.scheduledDate })
        .from(jobs)
        .where(eq(jobs.scheduleId, scheduleId))
        .orderBy(asc(jobs.scheduledDate))
    ).map((r) => r.d);

  const create = async (rrule: string) => (await t.create(rrule, { checklist: ['Mow'] })).id;

  it('extends each schedule to the moving horizon once, and a pass over current schedules makes nothing', async () => {
    const id = await create('FREQ=WEEKLY;BYDAY=WE');
    // Nothing is due right after creation: every schedule already reaches the horizon.
    expect(await extendScheduleHorizons(t.h.database.db)).toBe(0);

    // Three weeks later the horizon has moved: the new Wednesdays are made, once.
    const later = new Date(Date.now() + 21 * DAY);
    const laterToday = todayIn(TZ, later);
    expect(await extendScheduleHorizons(t.h.database.db, later)).toBeGreaterThanOrEqual(1);
    expect(await extendScheduleHorizons(t.h.database.db, later)).toBe(0);
    expect(await visitDates(id)).toEqual(weekdays(t.today, addDays(laterToday, 56), 3));
    const [row] = await t.h.admin.db.select().from(jobSchedules).where(eq(jobSchedules.id, id));
    expect(row?.generatedThrough).toBe(addDays(laterToday, 56));
  });

  it('leaves paused and ended schedules alone', async () => {
    const id = await create('FREQ=WEEKLY;BYDAY=FR');
    await t.owner.call('POST', `/api/jobs/schedules/${id}/pause`);
    const before = await t.h.admin.db.select({ n: count() }).from(jobs).where(eq(jobs.scheduleId, id));
    await extendScheduleHorizons(t.h.database.db, new Date(Date.now() + 30 * DAY));
    const after = await t.h.admin.db.select({ n: count() }).from(jobs).where(eq(jobs.scheduleId, id));
    expect(after).toEqual(before);
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'two connections making the same visits at once make each once (PostgreSQL)',
    async () => {
      const id = await create('FREQ=DAILY');
      await t.owner.call('POST', `/api/jobs/schedules/${id}/pause`);
      await t.owner.call('POST', `/api/jobs/schedules/${id}/resume`);
      // Past the horizon, so neither the create nor the resume made these dates.
      const dates = Array.from({ length: 30 }, (_, i) => addDays(t.today, 200 + i));
      const plan = [{ scheduleId: id, dates }];
      const actor = systemActor('test');
      let second: Promise<number> | undefined;
      const first = await inTenant(t.h.database.db, t.owner.organizationId, actor, async (ctx) => {
        const made = await makeVisits(ctx, plan, TZ);
        // The second connection starts while the first has not committed: it waits on
        // the unique index, then finds every visit made.
        second = inTenant(t.h.database.db, t.owner.organizationId, actor, (ctx2) => makeVisits(ctx2, plan, TZ));
        await new Promise((r) => setTimeout(r, 300));
        return made;
      });
      expect(first).toBe(30);
      expect(await second).toBe(0);

      // Two whole worker passes at once over the same due schedules.
      const ids = await Promise.all([create('FREQ=WEEKLY;BYDAY=MO'), create('FREQ=WEEKLY;BYDAY=TH')]);
      const later = new Date(Date.now() + 40 * DAY);
      await Promise.all([
        extendScheduleHorizons(t.h.database.db, later),
        extendScheduleHorizons(t.h.database.db, later),
      ]);
      const laterToday = todayIn(TZ, later);
      expect(await visitDates(ids[0] as string)).toEqual(weekdays(t.today, addDays(laterToday, 56), 1));
      expect(await visitDates(ids[1] as string)).toEqual(weekdays(t.today, addDays(laterToday, 56), 4));
    },
  );
});
