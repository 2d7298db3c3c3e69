import { and, asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobSchedules, jobs } from '../../src/db/schema/index.js';
import { addDays, today as todayIn } from '../../src/platform/dates.js';
import { countRows, createCustomer, createProperty, eventsDuring, setSettings } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { TZ, weekdays } from './schedules-fixture.js';

describe('recurring schedules', () => {
  let h: Harness;
  let owner: TestUser;
  let customerId: string;
  let propertyId: string;
  let today: string;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h, { timezone: TZ });
    customerId = (await createCustomer(h, owner)).id;
    propertyId = (await createProperty(h, owner, customerId)).id;
    today = todayIn(TZ);
  });
  afterAll(async () => h?.close());

  const visitsOf = (scheduleId: string) =>
    h.admin.db
      .select()
      .from(jobs)
      .where(eq(jobs.scheduleId, scheduleId))
      .orderBy(asc(jobs.scheduledDate), asc(jobs.id));

  const weekly = (fields: Record<string, unknown> = {}) =>
    owner.call('POST', '/api/jobs/schedules', {
      customerId,
      propertyId,
      title: 'Weekly mowing',
      rrule: 'FREQ=WEEKLY;BYDAY=TU',
      startDate: today,
      startTime: '08:00',
      durationMinutes: 45,
      lineItems: [{ description: 'Weekly mowing', quantity: 1, unitPrice: 45.005 - 0.005 }],
      checklist: ['Mow', 'Edge'],
      billing: { mode: 'batch' },
      ...fields,
    });

  it('makes one visit per Tuesday up to the horizon at once, at 08:00 local, with job.created each', async () => {
    let res!: Awaited<ReturnType<typeof weekly>>;
    const events = await eventsDuring(h, owner.organizationId, async () => {
      res = await weekly();
    });
    expect(res.statusCode, res.body).toBe(201);
    const schedule = res.json().data;
    const expected = weekdays(today, addDays(today, 56), 2);
    expect(schedule).toMatchObject({ status: 'active', rrule: 'FREQ=WEEKLY;BYDAY=TU', total: 45 });
    expect(schedule.nextOccurrences).toEqual(weekdays(today, addDays(today, 80), 2).slice(0, 10));
    const visits = await visitsOf(schedule.id);
    expect(visits.map((v) => v.scheduledDate)).toEqual(expected);
    expect(visits.map((v) => v.occurrenceDate)).toEqual(expected);
    for (const v of visits) {
      expect(v).toMatchObject({ status: 'scheduled', startTime: '08:00', durationMinutes: 45, propertyId });
      // 08:00 in Chicago is 13:00 or 14:00 UTC depending on that date's offset.
      const local = new Intl.DateTimeFormat('en-US', {
        timeZone: TZ,
        hour: '2-digit',
        minute: '2-digit',
        hour12: false,
      });
      expect(local.format(v.startsAt as Date)).toBe('08:00');
    }
    expect(events.filter((e) => e.type === 'job.created')).toHaveLength(expected.length);
    // Each event carries the visit exactly as the jobs list shows it.
    const listed = await owner.call('GET', '/api/jobs', undefined, {
      query: { customerId, startDate: today, endDate: addDays(today, 56), limit: '100' },
    });
    const shown = new Map(listed.json().data.map((j: { id: string }) => [j.id, j]));
    for (const e of events.filter((e) => e.type === 'job.created')) {
      const data = e.data as { jobId: string; job: unknown };
      expect(data.job).toEqual(shown.get(data.jobId));
    }

    const got = await owner.call('GET', `/api/jobs/${visits[0]?.id}`);
    expect(got.json().data).toMatchObject({ scheduleId: schedule.id, startTime: '08:00' });
    expect(got.json().data.checklist.map((c: { text: string }) => c.text)).toEqual(['Mow', 'Edge']);
  });

  it('keeps 08:00 local across the November daylight-saving change (startsAt per date)', async () => {
    const before = await owner.call('POST', '/api/jobs', {
      customerId,
      scheduledDate: '2026-10-27',
      startTime: '08:00',
    });
    const after = await owner.call('POST', '/api/jobs', {
      customerId,
      scheduledDate: '2026-11-03',
      startTime: '08:00',
    });
    expect(before.json().data.startsAt).toBe('2026-10-27T13:00:00.000Z');
    expect(after.json().data.startsAt).toBe('2026-11-03T14:00:00.000Z');
  });

  it('crosses the March change too when the horizon reaches it', async () => {
    const org = await newTenant(h, { timezone: TZ, name: 'Long horizon' });
    await setSettings(h, org.organizationId, { visitHorizonDays: 366 });
    const cus = await createCustomer(h, org);
    const res = await org.call('POST', '/api/jobs/schedules', {
      customerId: cus.id,
      title: 'Snow check',
      rrule: 'FREQ=WEEKLY;BYDAY=MO',
      startDate: today,
      startTime: '08:00',
      billing: { mode: 'none' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const offsets = new Set(
      (await visitsOf(res.json().data.id)).map((v) => (v.startsAt as Date).toISOString().slice(11, 16)),
    );
    expect([...offsets].sort()).toEqual(['13:00', '14:00']);
  });

  it('is idempotent: making the horizon again adds nothing (one visit per schedule and date)', async () => {
    const schedule = (await weekly()).json().data;
    const n = (await visitsOf(schedule.id)).length;
    const resumed = await owner.call('PATCH', `/api/jobs/schedules/${schedule.id}`, { notes: 'Gate code 1234' });
    expect(resumed.statusCode, resumed.body).toBe(200);
    expect(resumed.json().data.visits).toEqual({ updated: n, added: 0, removed: 0 });
    expect(await visitsOf(schedule.id)).toHaveLength(n);
  });

  it('skips one occurrence exactly; a skipped or deleted occurrence is never made again', async () => {
    const schedule = (await weekly()).json().data;
    const visits = await visitsOf(schedule.id);
    const [first, second] = visits;
    const skip = await owner.call('POST', `/api/jobs/schedules/${schedule.id}/skip`, { date: first?.occurrenceDate });
    expect(skip.statusCode, skip.body).toBe(200);
    expect(skip.json().data).toMatchObject({ id: first?.id, status: 'canceled' });
    const del = await owner.call('DELETE', `/api/jobs/${second?.id}`);
    expect(del.statusCode).toBe(204);
    // A date past the horizon is recorded and never made.
    const far = weekdays(addDays(today, 60), addDays(today, 70), 2)[0] as string;
    const future = await owner.call('POST', `/api/jobs/schedules/${schedule.id}/skip`, { date: far });
    expect(future.json().data).toEqual({ date: far, skipped: true });
    const notOccurrence = await owner.call('POST', `/api/jobs/schedules/${schedule.id}/skip`, {
      date: addDays(first?.occurrenceDate as string, 1),
    });
    expect(notOccurrence.statusCode).toBe(400);
    expect(notOccurrence.json().error.details[0].field).toBe('date');
    // The schedule names which of its next dates have no visit to come.
    const detail = (await owner.call('GET', `/api/jobs/schedules/${schedule.id}`)).json().data;
    expect(detail.skippedDates).toEqual(
      [first?.occurrenceDate, second?.occurrenceDate, far].filter((d) => detail.nextOccurrences.includes(d)),
    );
    expect(detail.skippedDates.slice(0, 2)).toEqual([first?.occurrenceDate, second?.occurrenceDate]);

    // Pause + resume remakes what the pause removed, but never the skipped or deleted dates.
    const paused = await owner.call('POST', `/api/jobs/schedules/${schedule.id}/pause`);
    expect(paused.json().data.visits.removed).toBe(visits.length - 2);
    const resumed = await owner.call('POST', `/api/jobs/schedules/${schedule.id}/resume`);
    expect(resumed.json().data.visits.added).toBe(visits.length - 2);
    const live = (await visitsOf(schedule.id)).filter((v) => v.status === 'scheduled').map((v) => v.scheduledDate);
    expect(live).toEqual(visits.slice(2).map((v) => v.scheduledDate));
  });

  it('edits forward: hand-edited, started and completed visits keep their values; a rule change removes and adds', async () => {
    const schedule = (await weekly()).json().data;
    const visits = await visitsOf(schedule.id);
    const [handEdited, started, completed] = visits;
    await owner.call('PATCH', `/api/jobs/${handEdited?.id}`, { startTime: '10:30' });
    await owner.call('PATCH', `/api/jobs/${started?.id}`, { status: 'in_progress' });
    await owner.call('PATCH', `/api/jobs/${completed?.id}`, { status: 'completed' });

    const res = await owner.call('PATCH', `/api/jobs/schedules/${schedule.id}`, { startTime: '09:00' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.visits).toEqual({ updated: visits.length - 3, added: 0, removed: 0 });
    const after = await visitsOf(schedule.id);
    expect(after.map((v) => v.id)).toEqual(visits.map((v) => v.id));
    expect(after.map((v) => v.startTime)).toEqual(['10:30', '08:00', '08:00', ...visits.slice(3).map(() => '09:00')]);

    // Tuesdays → Thursdays: the untouched Tuesday visits are canceled, Thursdays made.
    const thursdays = weekdays(today, addDays(today, 56), 4);
    const moved = await owner.call('PATCH', `/api/jobs/schedules/${schedule.id}`, { rrule: 'FREQ=WEEKLY;BYDAY=TH' });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().data.visits).toEqual({ updated: 0, added: thursdays.length, removed: visits.length - 3 });
    const live = (await visitsOf(schedule.id)).filter((v) => v.status !== 'canceled');
    expect(live.map((v) => v.id)).toEqual(expect.arrayContaining(visits.slice(0, 3).map((v) => v.id)));
    expect(
      live.filter((v) => v.occurrenceDate !== null && !visits.some((o) => o.id === v.id)).map((v) => v.scheduledDate),
    ).toEqual(thursdays);
  });

  it('ends a schedule: later not-started visits are canceled, and it accepts no more changes', async () => {
    const schedule = (await weekly()).json().data;
    const visits = await visitsOf(schedule.id);
    const endDate = visits[1]?.scheduledDate as string;
    const res = await owner.call('POST', `/api/jobs/schedules/${schedule.id}/end`, { endDate });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.schedule).toMatchObject({ status: 'ended', endDate });
    expect(res.json().data.visits.removed).toBe(visits.length - 2);
    const again = await owner.call('POST', `/api/jobs/schedules/${schedule.id}/pause`);
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('INVALID_STATE');
  });

  it('lists with filters and cursors', async () => {
    const other = (await createCustomer(h, owner)).id;
    const mine = (await weekly({ customerId: other, propertyId: undefined })).json().data;
    const res = await owner.call('GET', '/api/jobs/schedules', undefined, {
      query: { customerId: other, includeTotal: 'true' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.map((s: { id: string }) => s.id)).toEqual([mine.id]);
    expect(res.headers['x-total-count']).toBe('1');
    const page = await owner.call('GET', '/api/jobs/schedules', undefined, { query: { limit: '1' } });
    const next = await owner.call('GET', '/api/jobs/schedules', undefined, {
      query: { limit: '1', startingAfter: page.json().data[0].id },
    });
    expect(next.statusCode).toBe(200);
    expect(next.json().data[0].id).not.toBe(page.json().data[0].id);
    const bad = await owner.call('GET', '/api/jobs/schedules', undefined, { query: { startingAfter: 'sch_nope' } });
    expect(bad.statusCode).toBe(400);
  });

  it('refuses bad input with 400 naming the field, writing nothing', async () => {
    const other = await newTenant(h, { name: 'Other' });
    const foreignCustomer = await createCustomer(h, other);
    const foreignProperty = await createProperty(h, other, foreignCustomer.id);
    const crew = await other.call('POST', '/api/crew-tracking/crews', { name: 'Their crew' });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ rrule: 'FREQ=YEARLY' }, 'rrule'],
      [{ rrule: 'FREQ=WEEKLY;BYSETPOS=1;BYDAY=TU' }, 'rrule'],
      [{ rrule: 'FREQ=WEEKLY;BYDAY=TU;DTSTART=20260101' }, 'rrule'],
      [{ rrule: 'FREQ=MONTHLY;BYMONTHDAY=31;BYMONTH=2' }, 'rrule'],
      [{ rrule: 'FREQ=WEEKLY;BYDAY=TU', endDate: addDays(today, 0), startDate: addDays(today, 0) }, 'rrule'],
      [{ endDate: addDays(today, -1) }, 'endDate'],
      [{ startTime: '8:00' }, 'startTime'],
      [{ startTime: '24:00' }, 'startTime'],
      [{ durationMinutes: 0 }, 'durationMinutes'],
      [{ lineItems: [{ description: 'x', quantity: 1, unitPrice: 1.005 }] }, 'lineItems.0.unitPrice'],
      [{ customerId: foreignCustomer.id }, 'customerId'],
      [{ propertyId: foreignProperty.id }, 'propertyId'],
      [{ crewId: crew.json().data.id }, 'crewId'],
      [{ contractId: 'con_nope' }, 'contractId'],
      [{ lineItems: [{ serviceId: 'svc_nope', quantity: 1 }] }, 'lineItems'],
      [{ billing: { mode: 'installments', count: 2, amounts: [1], firstDate: today, every: 'month' } }, 'billing'],
      [{ billing: { mode: 'weekly' } }, 'billing'],
      [{ surprise: 1 }, 'surprise'],
    ];
    const before = await countRows(h, jobSchedules, owner.organizationId);
    const jobsBefore = await countRows(h, jobs, owner.organizationId);
    for (const [fields, field] of cases) {
      // A Tuesday rule with a one-day window on a non-Tuesday has no occurrence.
      const body = field === 'rrule' && fields.endDate ? { ...fields, rrule: notOn(today) } : fields;
      const res = await weekly(body);
      expect(res.statusCode, JSON.stringify(fields)).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_FAILED');
      expect(
        res
          .json()
          .error.details.map((d: { field: string }) => d.field)
          .join(' '),
        JSON.stringify(fields),
      ).toContain(field);
    }
    expect(await countRows(h, jobSchedules, owner.organizationId)).toBe(before);
    expect(await countRows(h, jobs, owner.organizationId)).toBe(jobsBefore);
  });

  it('answers 404 for another organization’s schedule in the path', async () => {
    const other = await newTenant(h, { name: 'Stranger' });
    const mine = (await weekly()).json().data;
    for (const [method, url, body] of [
      ['GET', `/api/jobs/schedules/${mine.id}`, undefined],
      ['PATCH', `/api/jobs/schedules/${mine.id}`, { title: 'x' }],
      ['POST', `/api/jobs/schedules/${mine.id}/pause`, undefined],
      ['POST', `/api/jobs/schedules/${mine.id}/skip`, { date: today }],
    ] as const) {
      const res = await other.call(method, url, body);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
    }
    const [row] = await h.admin.db
      .select()
      .from(jobSchedules)
      .where(and(eq(jobSchedules.id, mine.id), eq(jobSchedules.title, 'Weekly mowing')));
    expect(row?.status).toBe('active');
  });
});

/** A weekly rule on a weekday other than `date`'s, so a one-day window has no occurrence. */
function notOn(date: string): string {
  const days = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'];
  return `FREQ=WEEKLY;BYDAY=${days[(new Date(`${date}T00:00:00Z`).getUTCDay() + 1) % 7]}`;
}
