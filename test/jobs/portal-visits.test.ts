import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobs } from '../../src/db/schema/index.js';
import { today as todayIn } from '../../src/platform/dates.js';
import { createCustomer } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

describe('portal: upcoming visits', () => {
  let h: Harness;
  let owner: TestUser;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h, { timezone: 'America/Chicago' });
  });
  afterAll(async () => h?.close());

  it('lists the contract customer’s upcoming visits, not another customer’s, not canceled ones', async () => {
    const customer = await createCustomer(h, owner);
    const other = await createCustomer(h, owner);
    const today = todayIn('America/Chicago');
    const schedule = await owner.call('POST', '/api/jobs/schedules', {
      customerId: customer.id,
      title: 'Weekly mowing',
      rrule: 'FREQ=WEEKLY;BYDAY=TU',
      startDate: today,
      startTime: '08:00',
      billing: { mode: 'none' },
    });
    const scheduleId = schedule.json().data.id;
    await owner.call('POST', '/api/jobs', { customerId: other.id, scheduledDate: today });
    const skipped = schedule.json().data.nextOccurrences[0];
    await owner.call('POST', `/api/jobs/schedules/${scheduleId}/skip`, { date: skipped });
    const contract = await owner.call('POST', '/api/contracts', {
      title: 'Lawn care',
      customerId: customer.id,
      services: [{ description: 'Weekly mowing', unitPrice: 45, quantity: 26 }],
    });
    const sent = await owner.call('POST', `/api/contracts/${contract.json().data.id}/send`);
    expect(sent.statusCode, sent.body).toBe(200);
    const path = new URL(sent.json().data.portalUrl).pathname;
    const res = await h.app.inject({ method: 'GET', url: `${path}/visits` });
    expect(res.statusCode, res.body).toBe(200);
    const visits = await h.admin.db.select().from(jobs).where(eq(jobs.scheduleId, scheduleId));
    const upcoming = visits.filter((v) => v.status === 'scheduled').map((v) => v.id);
    expect(
      res
        .json()
        .data.map((v: { id: string }) => v.id)
        .sort(),
    ).toEqual(upcoming.sort());
    expect(res.json().data[0]).toMatchObject({ startTime: '08:00', status: 'scheduled' });
    const bad = await h.app.inject({ method: 'GET', url: '/api/portal/pt_nope/visits' });
    expect(bad.statusCode).toBe(404);
  });
});
