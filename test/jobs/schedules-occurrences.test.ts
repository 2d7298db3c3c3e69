import { describe, expect, it } from 'vitest';
import { extendScheduleHorizons } from '../../src/modules/jobs/schedules/schedules.tasks.js';
import { addDays, today as todayIn } from '../../src/platform/dates.js';
import { DAY, TZ, useScheduleTenant, weekdays } from './schedules-fixture.js';

/*
 * Review of "a visit the schedule removes gives its occurrence back" (occurrence_date
 * NULL on the canceled visit). Kept, because every maker of visits plans from the
 * schedule's CURRENT rule: an edit that moves the visits away leaves the old dates free,
 * yet neither the worker nor a later edit makes them unless the rule brings them back,
 * and a skip (job_schedule_skips, and its canceled visit keeping its occurrence) or a
 * visit canceled by hand is never made again, whatever pauses and edits follow.
 */
describe('occurrences a schedule gives back, and the ones it never makes again', () => {
  const t = useScheduleTenant();
  const scheduled = async (id: string) =>
    (await t.visits(id)).filter((v) => v.status === 'scheduled').map((v) => v.scheduledDate);

  it('an edit away from Tuesdays frees them; the worker never makes them again; moving back does, except the skip', async () => {
    const { id } = await t.create('FREQ=WEEKLY;BYDAY=TU');
    const horizon = addDays(t.today, 56);
    const tuesdays = weekdays(t.today, horizon, 2);
    const skipped = tuesdays[1] as string;
    expect((await t.owner.call('POST', `/api/jobs/schedules/${id}/skip`, { date: skipped })).statusCode).toBe(200);
    const firstIds = new Set((await t.visits(id)).map((v) => v.id));

    const toWednesday = await t.owner.call('PATCH', `/api/jobs/schedules/${id}`, { rrule: 'FREQ=WEEKLY;BYDAY=WE' });
    expect(toWednesday.statusCode, toWednesday.body).toBe(200);
    expect(toWednesday.json().data.visits).toMatchObject({
      removed: tuesdays.length - 1,
      added: weekdays(t.today, horizon, 3).length,
    });
    const moved = await t.visits(id);
    // The edit's Tuesdays are canceled with their occurrence given back; the skip keeps its own.
    for (const v of moved.filter((v) => tuesdays.includes(v.scheduledDate))) {
      expect(v.status).toBe('canceled');
      expect(v.occurrenceDate).toBe(v.scheduledDate === skipped ? skipped : null);
    }

    // Three weeks on, the worker extends the schedule: Wednesdays only, no Tuesday comes back.
    const later = new Date(Date.now() + 21 * DAY);
    expect(await extendScheduleHorizons(t.h.database.db, later)).toBeGreaterThanOrEqual(1);
    expect(await scheduled(id)).toEqual(weekdays(t.today, addDays(todayIn(TZ, later), 56), 3));

    // Back to Tuesdays: they are made again as new visits, all but the skipped one.
    const back = await t.owner.call('PATCH', `/api/jobs/schedules/${id}`, { rrule: 'FREQ=WEEKLY;BYDAY=TU' });
    expect(back.statusCode, back.body).toBe(200);
    expect(back.json().data.visits.added).toBe(tuesdays.length - 1);
    expect(await scheduled(id)).toEqual(tuesdays.filter((d) => d !== skipped));
    const again = await t.visits(id);
    for (const v of again.filter((v) => v.status === 'scheduled')) expect(firstIds.has(v.id)).toBe(false);
    expect(again.filter((v) => v.scheduledDate === skipped)).toHaveLength(1);
  });

  it('pause gives the visits back and resume makes them again; a skip and a visit canceled by hand stay gone', async () => {
    const { id } = await t.create('FREQ=WEEKLY;BYDAY=TH');
    const thursdays = weekdays(t.today, addDays(t.today, 56), 4);
    const [, skipped, canceledByHand] = thursdays as [string, string, string];
    await t.owner.call('POST', `/api/jobs/schedules/${id}/skip`, { date: skipped });
    const byHand = (await t.visits(id)).find((v) => v.scheduledDate === canceledByHand);
    const cancel = await t.owner.call('PUT', `/api/jobs/${byHand?.id}`, { status: 'canceled' });
    expect(cancel.statusCode, cancel.body).toBe(200);

    const pause = await t.owner.call('POST', `/api/jobs/schedules/${id}/pause`);
    expect(pause.json().data.visits.removed).toBe(thursdays.length - 2);
    expect(await scheduled(id)).toEqual([]);
    const resume = await t.owner.call('POST', `/api/jobs/schedules/${id}/resume`);
    expect(resume.json().data.visits.added).toBe(thursdays.length - 2);
    expect(await scheduled(id)).toEqual(thursdays.filter((d) => d !== skipped && d !== canceledByHand));
    // Twice over: pausing and resuming again makes no second visit for any date.
    await t.owner.call('POST', `/api/jobs/schedules/${id}/pause`);
    await t.owner.call('POST', `/api/jobs/schedules/${id}/resume`);
    const all = await t.visits(id);
    expect(all.filter((v) => v.occurrenceDate !== null).map((v) => v.occurrenceDate)).toEqual([
      ...new Set(all.filter((v) => v.occurrenceDate !== null).map((v) => v.occurrenceDate)),
    ]);
    expect(all.filter((v) => v.scheduledDate === skipped || v.scheduledDate === canceledByHand)).toHaveLength(2);
  });
});
