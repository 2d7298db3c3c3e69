import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, today as todayIn } from '../../src/platform/dates.js';
import { createCustomer, createProperty } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/*
 * Issue 48 item 2: the lists answer the office's everyday questions in one call.
 * "What does crew A do tomorrow?", "the visits of that schedule", "unpaid and more than
 * 30 days old".
 */
describe('lists that answer the office’s questions', () => {
  let h: Harness;
  let owner: TestUser;
  let customerId: string;
  let crewA: string;
  let crewB: string;
  let today: string;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    today = todayIn('UTC');
    customerId = (await createCustomer(h, owner)).id;
    crewA = (await owner.call('POST', '/api/crew-tracking/crews', { name: 'Crew A' })).json().data.id;
    crewB = (await owner.call('POST', '/api/crew-tracking/crews', { name: 'Crew B' })).json().data.id;
  });
  afterAll(async () => h?.close());

  const job = async (fields: Record<string, unknown>) => {
    const res = await owner.call('POST', '/api/jobs', { customerId, scheduledDate: addDays(today, 1), ...fields });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.id as string;
  };
  const ids = (res: { json(): { data: Array<{ id: string }> } }) =>
    res
      .json()
      .data.map((j) => j.id)
      .sort();

  it('filters jobs and the calendar by crewId, and by scheduleId', async () => {
    const a1 = await job({ crewId: crewA });
    const a2 = await job({ crewId: crewA, startTime: '07:30' });
    await job({ crewId: crewB });
    const tomorrow = addDays(today, 1);
    const list = await owner.call('GET', `/api/jobs?crewId=${crewA}&startDate=${tomorrow}&endDate=${tomorrow}`);
    expect(list.statusCode, list.body).toBe(200);
    expect(ids(list)).toEqual([a1, a2].sort());
    const calendar = await owner.call(
      'GET',
      `/api/jobs/calendar?crewId=${crewA}&startDate=${tomorrow}&endDate=${tomorrow}`,
    );
    expect(calendar.statusCode, calendar.body).toBe(200);
    expect(
      calendar
        .json()
        .data[0].jobs.map((j: { id: string }) => j.id)
        .sort(),
    ).toEqual([a1, a2].sort());

    const schedule = await owner.call('POST', '/api/jobs/schedules', {
      customerId,
      title: 'Weekly mowing',
      rrule: 'FREQ=WEEKLY',
      startDate: today,
      billing: { mode: 'none' },
    });
    expect(schedule.statusCode, schedule.body).toBe(201);
    const scheduleId = schedule.json().data.id;
    const visits = await owner.call('GET', `/api/jobs?scheduleId=${scheduleId}`);
    expect(visits.statusCode, visits.body).toBe(200);
    expect(visits.json().data.length).toBeGreaterThan(0);
    expect(visits.json().data.every((j: { scheduleId: string }) => j.scheduleId === scheduleId)).toBe(true);
  });

  it('takes several states at once on jobs, invoices and estimates, and refuses an unknown one in words', async () => {
    const canceled = await job({});
    expect((await owner.call('PATCH', `/api/jobs/${canceled}`, { status: 'canceled' })).statusCode).toBe(200);
    const both = await owner.call('GET', '/api/jobs?status=scheduled,canceled');
    expect(both.statusCode, both.body).toBe(200);
    const states = new Set(both.json().data.map((j: { status: string }) => j.status));
    expect(states).toEqual(new Set(['scheduled', 'canceled']));
    for (const path of ['/api/jobs', '/api/invoices', '/api/estimates']) {
      const bad = await owner.call('GET', `${path}?status=sent,lost`);
      expect(bad.statusCode, path).toBe(400);
      expect(bad.json().error.details[0].field).toBe('status');
      expect(bad.json().error.details[0].message).toMatch(/^must be one or more of: .*comma-separated, e\.g\. /);
    }
  });

  it('answers "unpaid and more than 30 days old" in one call: status=sent,partially_paid,overdue&dueBefore', async () => {
    const invoice = async (dueDate: string, send: boolean) => {
      const res = await owner.call('POST', '/api/invoices', {
        customerId,
        invoiceDate: addDays(dueDate, -30),
        dueDate,
        lineItems: [{ description: 'Mowing', quantity: 1, unitPrice: 40 }],
      });
      expect(res.statusCode, res.body).toBe(201);
      if (send) expect((await owner.call('POST', `/api/invoices/${res.json().data.id}/send`)).statusCode).toBe(200);
      return res.json().data.id as string;
    };
    const old = await invoice(addDays(today, -45), true);
    const recent = await invoice(addDays(today, -5), true);
    await invoice(addDays(today, -60), false); // a draft: not unpaid
    const cutoff = addDays(today, -30);
    const res = await owner.call('GET', `/api/invoices?status=sent,partially_paid,overdue&dueBefore=${cutoff}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(ids(res)).toEqual([old]);
    const after = await owner.call('GET', `/api/invoices?status=sent,overdue&dueAfter=${cutoff}`);
    expect(ids(after)).toEqual([recent]);
    const bad = await owner.call('GET', '/api/invoices?dueBefore=last month');
    expect(bad.json().error.details).toEqual([
      { field: 'dueBefore', message: 'must be a date as YYYY-MM-DD, e.g. 2026-05-01' },
    ]);
  });

  it('expands customer and property on jobs, invoices and estimates (expand=a,b or Stripe’s expand[])', async () => {
    const propertyId = (await createProperty(h, owner, customerId, { street: '12 Oak Ave', name: 'Front lot' })).id;
    const jobId = await job({ propertyId, crewId: crewA });
    const invoice = await owner.call('POST', '/api/invoices', {
      customerId,
      propertyId,
      lineItems: [{ description: 'Mowing', quantity: 1, unitPrice: 40 }],
    });
    const estimate = await owner.call('POST', '/api/estimates', {
      customerId,
      lineItems: [{ description: 'Patio', quantity: 1, unitPrice: 400 }],
    });
    const property = {
      id: propertyId,
      name: 'Front lot',
      address: '12 Oak Ave, Springfield, IL 62704',
      lat: null,
      lng: null,
    };
    const list = await owner.call('GET', `/api/jobs?crewId=${crewA}&expand=customer,property`);
    expect(list.statusCode, list.body).toBe(200);
    const found = list.json().data.find((j: { id: string }) => j.id === jobId);
    expect(found.customer).toMatchObject({ id: customerId, name: expect.any(String) });
    expect(found.property).toEqual(property);
    const stripeStyle = await owner.call(
      'GET',
      `/api/invoices/${invoice.json().data.id}?expand[]=customer&expand[]=property`,
    );
    expect(stripeStyle.statusCode, stripeStyle.body).toBe(200);
    expect(stripeStyle.json().data.property).toEqual(property);
    expect(stripeStyle.json().data.customer.id).toBe(customerId);
    const est = await owner.call('GET', `/api/estimates?expand=property`);
    const e = est.json().data.find((x: { id: string }) => x.id === estimate.json().data.id);
    expect(e.property).toBeNull();
    expect(e.customer).toBeUndefined();
    // Without expand, nothing more than before.
    const plain = await owner.call('GET', `/api/jobs/${jobId}`);
    expect(plain.json().data.customer).toBeUndefined();
    const bad = await owner.call('GET', '/api/jobs?expand=crew');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details[0]).toEqual({
      field: 'expand',
      message: 'must be one or more of: customer, property, comma-separated, e.g. customer,property',
    });
  });
});
