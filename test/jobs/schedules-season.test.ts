import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { jobs, mailJobs } from '../../src/db/schema/index.js';
import { activateDueContracts } from '../../src/modules/contracts/contracts.lifecycle.js';
import { sendVisitReminders } from '../../src/modules/jobs/schedules/reminders.tasks.js';
import { haversineKm } from '../../src/platform/route-optimizer.js';
import { createCustomer, createProperty, setSettings } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/*
 * Issue 27's "done when", as a new owner would try it, through HTTP: a weekly Tuesday
 * schedule from a signed contract fills eight weeks at 08:00 local across the November
 * daylight-saving change, a skip and a price edit touch exactly their visits, the
 * customer is reminded once the day before, and the crew's day comes back shorter.
 * "Today" is the JS clock (every schedule path reads `new Date()`), pinned with fake
 * Date only (timers stay real, so the database drivers are unaffected).
 */

const TZ = 'America/Chicago';
/** Monday 2027-10-11, 10:00 CDT: the contract starts today, the first visit is tomorrow. */
const MONDAY = new Date('2027-10-11T15:00:00Z');
const TUESDAYS = [
  '2027-10-12',
  '2027-10-19',
  '2027-10-26',
  '2027-11-02',
  '2027-11-09',
  '2027-11-16',
  '2027-11-23',
  '2027-11-30',
];

type Visit = { id: string; scheduledDate: string; startsAt: string; status: string; total: number };

describe('a lawn-care season from a signed contract (issue 27, done when)', () => {
  let h: Harness;
  let owner: TestUser;
  let customerId: string;
  let crewId: string;
  let scheduleId: string;
  const byDate = new Map<string, string>();

  const setToday = (at: Date) => vi.setSystemTime(at);
  const visitsOf = async (): Promise<Visit[]> => {
    const res = await owner.call('GET', '/api/jobs', undefined, {
      query: { customerId, startDate: '2027-10-01', endDate: '2027-12-31', limit: '100' },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };
  const visit = async (date: string) => {
    const res = await owner.call('GET', `/api/jobs/${byDate.get(date)}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };

  beforeAll(async () => {
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    setToday(MONDAY);
    h = await createHarness();
    owner = await newTenant(h, { timezone: TZ });
    await setSettings(h, owner.organizationId, { visitReminderHours: 24, depot: { lat: 41.88, lng: -87.7 } });
    crewId = (await owner.call('POST', '/api/crew-tracking/crews', { name: 'Mowing crew' })).json().data.id;
    customerId = (await createCustomer(h, owner, { email: 'dana@example.com' })).id;
    const property = await createProperty(h, owner, customerId, { lat: 41.88, lng: -87.3 });

    // The contract: sent, then signed by the customer in the portal; it starts today.
    const contract = await owner.call('POST', '/api/contracts', {
      title: 'Weekly mowing',
      customerId,
      propertyId: property.id,
      startDate: '2027-10-11',
      endDate: '2028-10-31',
      services: [{ description: 'Weekly mowing', unitPrice: 45, quantity: 30 }],
    });
    expect(contract.statusCode, contract.body).toBe(201);
    const contractId = contract.json().data.id;
    const schedule = await owner.call('POST', '/api/jobs/schedules', {
      customerId,
      propertyId: property.id,
      contractId,
      title: 'Weekly mowing',
      rrule: 'FREQ=WEEKLY;BYDAY=TU',
      startDate: '2027-10-11',
      startTime: '08:00',
      durationMinutes: 45,
      crewId,
      lineItems: [{ description: 'Weekly mowing', quantity: 1, unitPrice: 45 }],
      billing: { mode: 'none' },
    });
    expect(schedule.statusCode, schedule.body).toBe(201);
    scheduleId = schedule.json().data.id;
    expect(schedule.json().data.status).toBe('paused');
    const sent = await owner.call('POST', `/api/contracts/${contractId}/send`);
    expect(sent.statusCode, sent.body).toBe(200);
    const signed = await h.app.inject({
      method: 'POST',
      url: `${new URL(sent.json().data.portalUrl).pathname}/sign`,
      payload: { signerName: 'Dana Reyes' },
    });
    expect(signed.statusCode, signed.body).toBe(200);
    // The worker's contract pass activates it (start date today), and with it the schedule.
    expect(await activateDueContracts(h.database.db, new Date())).toBe(1);
  });
  afterAll(async () => {
    vi.useRealTimers();
    await h?.close();
  });

  it('fills the next eight Tuesdays of the calendar at 08:00 local, across the November change', async () => {
    const calendar = await owner.call('GET', '/api/jobs/calendar', undefined, {
      query: { startDate: '2027-10-11', endDate: '2027-12-06' },
    });
    expect(calendar.statusCode, calendar.body).toBe(200);
    const days = calendar.json().data as Array<{ date: string; jobs: Array<Visit & { startTime: string }> }>;
    expect(days.map((d) => d.date)).toEqual(TUESDAYS);
    for (const day of days) {
      expect(day.jobs).toHaveLength(1);
      const [job] = day.jobs;
      expect(job?.startTime).toBe('08:00');
      // 08:00 CDT is 13:00 UTC until 2027-11-07, 08:00 CST is 14:00 UTC after it.
      expect(job?.startsAt).toBe(`${day.date}T${day.date < '2027-11-07' ? '13' : '14'}:00:00.000Z`);
      expect(job?.total).toBe(45);
      byDate.set(day.date, job?.id as string);
    }
  });

  it('reminds the customer once, the day before, through the mail outbox', async () => {
    // Monday 09:00 CDT: the Tuesday visit starts in 23 hours, the next one in a week.
    for (const at of ['2027-10-11T14:00:00Z', '2027-10-11T20:00:00Z', '2027-10-12T06:00:00Z']) {
      await sendVisitReminders(h.database.db, new Date(at));
    }
    const ids = [...byDate.values()];
    const mails = await h.admin.db
      .select()
      .from(mailJobs)
      .where(and(eq(mailJobs.documentType, 'job'), inArray(mailJobs.documentId, ids)));
    expect(mails).toHaveLength(1);
    expect(mails[0]?.documentId).toBe(byDate.get('2027-10-12'));
    expect(mails[0]?.to).toEqual(['dana@example.com']);
    expect(mails[0]?.subject).toContain('2027-10-12 at 08:00');
    expect((await visit('2027-10-12')).reminderSentAt).toBe('2027-10-11T14:00:00.000Z');
    expect((await visit('2027-10-19')).reminderSentAt).toBeNull();
  });

  it('skipping one Tuesday and editing the price from next week touch exactly their visits', async () => {
    // Set-up by hand: one visit edited, one started, one completed and invoiced.
    const notes = await owner.call('PUT', `/api/jobs/${byDate.get('2027-10-26')}`, { notes: 'Gate is locked' });
    expect(notes.statusCode, notes.body).toBe(200);
    const started = await owner.call('PUT', `/api/jobs/${byDate.get('2027-11-09')}`, { status: 'in_progress' });
    expect(started.statusCode, started.body).toBe(200);
    const done = await owner.call('PUT', `/api/jobs/${byDate.get('2027-11-16')}`, { status: 'completed' });
    expect(done.statusCode, done.body).toBe(200);
    const billed = await owner.call('POST', '/api/invoices/from-jobs', { jobIds: [byDate.get('2027-11-16')] });
    expect(billed.statusCode, billed.body).toBe(201);

    const skip = await owner.call('POST', `/api/jobs/schedules/${scheduleId}/skip`, { date: '2027-11-02' });
    expect(skip.statusCode, skip.body).toBe(200);
    expect(skip.json().data).toMatchObject({ id: byDate.get('2027-11-02'), status: 'canceled' });

    // A week later (Monday 2027-10-18) the price goes up from this week on.
    setToday(new Date('2027-10-18T15:00:00Z'));
    const edit = await owner.call('PATCH', `/api/jobs/schedules/${scheduleId}`, {
      lineItems: [{ description: 'Weekly mowing', quantity: 1, unitPrice: 50 }],
    });
    expect(edit.statusCode, edit.body).toBe(200);
    // Rewritten: 10-19, 11-23, 11-30; added: 12-07, the Tuesday the moved horizon reaches.
    expect(edit.json().data.visits).toEqual({ updated: 3, added: 1, removed: 0 });

    const after = new Map((await visitsOf()).map((v) => [v.scheduledDate, v]));
    const expected: Record<string, [status: string, total: number]> = {
      '2027-10-12': ['scheduled', 45], // earlier than the edit: keeps the old price
      '2027-10-19': ['scheduled', 50],
      '2027-10-26': ['scheduled', 45], // edited by hand
      '2027-11-02': ['canceled', 45], // skipped
      '2027-11-09': ['in_progress', 45], // started
      '2027-11-16': ['completed', 45], // completed and invoiced
      '2027-11-23': ['scheduled', 50],
      '2027-11-30': ['scheduled', 50],
      '2027-12-07': ['scheduled', 50], // made by the edit, at the new price
    };
    expect(Object.fromEntries([...after].map(([d, v]) => [d, [v.status, v.total]]))).toEqual(expected);
    for (const [date, v] of after) if (byDate.has(date)) expect(v.id).toBe(byDate.get(date));
    expect((await visit('2027-10-26')).notes).toBe('Gate is locked');
    expect((await visit('2027-11-16')).invoiceId).toBe(billed.json().data.invoices[0].id);

    // The skipped Tuesday is gone from the calendar and is never made again.
    const calendar = await owner.call('GET', '/api/jobs/calendar', undefined, {
      query: { startDate: '2027-10-18', endDate: '2027-12-13', status: 'scheduled' },
    });
    expect(calendar.json().data.map((d: { date: string }) => d.date)).toEqual([
      '2027-10-19',
      '2027-10-26',
      '2027-11-23',
      '2027-11-30',
      '2027-12-07',
    ]);
    const again = await owner.call('PATCH', `/api/jobs/schedules/${scheduleId}`, { notes: 'Back gate' });
    expect(again.json().data.visits.added).toBe(0);
    expect((await visitsOf()).filter((v) => v.scheduledDate === '2027-11-02')).toHaveLength(1);
  });

  it('a scheduled visit an invoice already names keeps its price', async () => {
    // Installment or batch billing may name a visit before it is done; a price edit leaves it alone.
    const invoiced = byDate.get('2027-11-30') as string;
    const [billedVisit] = await h.admin.db
      .select({ invoiceId: jobs.invoiceId })
      .from(jobs)
      .where(eq(jobs.id, byDate.get('2027-11-16') as string));
    await h.admin.db
      .update(jobs)
      .set({ invoiceId: billedVisit?.invoiceId ?? null })
      .where(eq(jobs.id, invoiced));
    const edit = await owner.call('PATCH', `/api/jobs/schedules/${scheduleId}`, {
      lineItems: [{ description: 'Weekly mowing', quantity: 1, unitPrice: 55 }],
    });
    expect(edit.json().data.visits).toEqual({ updated: 3, added: 0, removed: 0 });
    const totals = Object.fromEntries((await visitsOf()).map((v) => [v.scheduledDate, v.total]));
    expect(totals).toMatchObject({ '2027-10-19': 55, '2027-11-23': 55, '2027-11-30': 50, '2027-12-07': 55 });
  });

  it('answers the crew’s Tuesday in a shorter driving order than the booked one', async () => {
    // Three more customers on the same crew's Tuesdays, booked in a zig-zag along one street.
    const lngs = [-87.6, -87.4, -87.5];
    for (const lng of lngs) {
      const other = await createCustomer(h, owner);
      const property = await createProperty(h, owner, other.id, { lat: 41.88, lng });
      const res = await owner.call('POST', '/api/jobs/schedules', {
        customerId: other.id,
        propertyId: property.id,
        title: 'Weekly mowing',
        rrule: 'FREQ=WEEKLY;BYDAY=TU',
        startDate: '2027-10-18',
        startTime: '08:00',
        crewId,
        billing: { mode: 'none' },
      });
      expect(res.statusCode, res.body).toBe(201);
    }
    const date = '2027-11-23';
    const booked = await owner.call('GET', '/api/jobs', undefined, { query: { startDate: date, endDate: date } });
    // The booked order (as listed): the contract's visit at -87.3, then -87.6, -87.4, -87.5.
    const depot = { lat: 41.88, lng: -87.7 };
    const points = [-87.3, ...lngs].map((lng) => ({ lat: 41.88, lng }));
    let naive = 0;
    points.reduce((from, to) => {
      naive += haversineKm(from, to);
      return to;
    }, depot);
    expect(booked.json().data).toHaveLength(4);

    const res = await owner.call('GET', '/api/jobs/route', undefined, { query: { date, crewId } });
    expect(res.statusCode, res.body).toBe(200);
    const route = res.json().data;
    expect(route.stops).toHaveLength(4);
    expect(route.distanceKm).toBeLessThan(naive - 1);
    // West to east from the depot: -87.6, -87.5, -87.4, then the contract customer at -87.3.
    expect(route.stops.at(-1).jobId).toBe(byDate.get(date));
    const apply = await owner.call('POST', '/api/jobs/route/apply', undefined, { query: { date, crewId } });
    expect(apply.statusCode, apply.body).toBe(200);
    expect((await visit(date)).routeOrder).toBe(4);
  });
});
