import { describe, expect, it } from 'vitest';
import { addDays } from '../../src/platform/dates.js';
import { useScheduleTenant } from './schedules-fixture.js';

/*
 * Issue 48: a schedule whose first visit is still ahead could not be ended (endDate
 * today < startDate answered 400 "endDate: must not be before startDate"). Ending is
 * always allowed: such a schedule ends with no visit at all.
 */
describe('ending a schedule before its first visit', () => {
  const t = useScheduleTenant();

  const ahead = () => t.create('FREQ=WEEKLY;BYDAY=MO,WE,FR', { startDate: addDays(t.today, 14) });

  it.each([
    ['no body', undefined],
    ['{}', {}],
    ['today', 'today'],
  ])('ends with %s: every visit canceled, none planned', async (_name, body) => {
    const schedule = await ahead();
    expect((await t.visits(schedule.id)).length).toBeGreaterThan(0);
    const payload = body === 'today' ? { endDate: t.today } : body;
    const res = await t.owner.call('POST', `/api/jobs/schedules/${schedule.id}/end`, payload);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.schedule).toMatchObject({ status: 'ended', endDate: t.today });
    expect((await t.visits(schedule.id)).every((v) => v.status === 'canceled')).toBe(true);
    const read = await t.owner.call('GET', `/api/jobs/schedules/${schedule.id}`);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json().data).toMatchObject({ status: 'ended', nextOccurrences: [] });
  });

  it('ends a paused schedule between startDate and its first occurrence', async () => {
    // Starts on a Sunday two weeks on at the latest; the rule's first visit is a Wednesday after it.
    let start = addDays(t.today, 14);
    while (new Date(`${start}T00:00:00Z`).getUTCDay() !== 0) start = addDays(start, 1);
    const schedule = await t.create('FREQ=WEEKLY;BYDAY=WE', { startDate: start });
    expect((await t.owner.call('POST', `/api/jobs/schedules/${schedule.id}/pause`)).statusCode).toBe(200);
    const res = await t.owner.call('POST', `/api/jobs/schedules/${schedule.id}/end`, { endDate: addDays(start, 1) });
    expect(res.statusCode, res.body).toBe(200);
    const read = await t.owner.call('GET', `/api/jobs/schedules/${schedule.id}`);
    expect(read.json().data).toMatchObject({ status: 'ended', endDate: addDays(start, 1), nextOccurrences: [] });
    expect((await t.visits(schedule.id)).every((v) => v.status === 'canceled')).toBe(true);
  });

  it('still ends a running schedule on the date given, keeping visits up to it', async () => {
    const schedule = await t.create('FREQ=DAILY');
    const res = await t.owner.call('POST', `/api/jobs/schedules/${schedule.id}/end`, { endDate: addDays(t.today, 3) });
    expect(res.statusCode, res.body).toBe(200);
    const kept = (await t.visits(schedule.id)).filter((v) => v.status !== 'canceled').map((v) => v.scheduledDate);
    expect(kept.at(-1)).toBe(addDays(t.today, 3));
  });
});
