import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts } from '../../src/db/schema/index.js';
import { calendarDateOf } from '../../src/platform/calendar-date.js';
import { createCustomer, line } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/*
 * Request date fields the spec calls an "ISO 8601 string" or a "string" (estimateDate,
 * expirationDate, scheduledDate, a contract's startDate/endDate) take a date-time too:
 * its calendar date in the organization's timezone. Fields typed "date" (invoiceDate,
 * dueDate, paymentDate) stay date-only.
 */
describe('calendar-date request fields', () => {
  let h: Harness;
  let owner: TestUser;
  let customerId: string;
  // 02:00 UTC on March 1st is 20:00 on February 28th in Chicago (UTC−6 in winter).
  const INSTANT = '2026-03-01T02:00:00Z';

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h, { timezone: 'America/Chicago' });
    customerId = (await createCustomer(h, owner)).id;
  });
  afterAll(async () => h?.close());

  it('reads a date-time as its calendar date in the timezone, a date as given', () => {
    expect(calendarDateOf('d', INSTANT, 'America/Chicago')).toBe('2026-02-28');
    expect(calendarDateOf('d', INSTANT, 'UTC')).toBe('2026-03-01');
    expect(calendarDateOf('d', '2026-03-01T02:00:00+05:00', 'America/Chicago')).toBe('2026-02-28');
    expect(calendarDateOf('d', '2026-03-01T02:00-06:00', 'America/Chicago')).toBe('2026-03-01');
    expect(calendarDateOf('d', '2026-03-01T23:59:59.999Z', 'Asia/Tokyo')).toBe('2026-03-02');
    expect(calendarDateOf('d', '2026-03-01', 'Asia/Tokyo')).toBe('2026-03-01');
    for (const bad of ['2026-03-01T02:00:00', '2026-02-30T10:00:00Z', '2026-03-01T25:00:00Z', '2026-02-30', 'x']) {
      expect(() => calendarDateOf('d', bad, 'UTC'), bad).toThrow();
    }
  });

  it('estimates: estimateDate and expirationDate on create and update', async () => {
    const res = await owner.call('POST', '/api/estimates', {
      customerId,
      lineItems: [line()],
      estimateDate: INSTANT,
      expirationDate: '2026-03-31T05:30:00Z', // 00:30 on the 31st in Chicago (CDT, UTC−5)
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data).toMatchObject({ estimateDate: '2026-02-28', expirationDate: '2026-03-31' });
    const id = res.json().data.id;
    const upd = await owner.call('PUT', `/api/estimates/${id}`, { expirationDate: '2026-04-10T03:00:00Z' });
    expect(upd.statusCode, upd.body).toBe(200);
    expect(upd.json().data.expirationDate).toBe('2026-04-09');
    // Defaulted from the converted date: estimateDate + 30 days.
    const dflt = await owner.call('POST', '/api/estimates', { customerId, lineItems: [line()], estimateDate: INSTANT });
    expect(dflt.json().data).toMatchObject({ estimateDate: '2026-02-28', expirationDate: '2026-03-30' });
  });

  it('jobs: scheduledDate on create and update', async () => {
    const res = await owner.call('POST', '/api/jobs', { customerId, scheduledDate: INSTANT });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.scheduledDate).toBe('2026-02-28');
    const upd = await owner.call('PUT', `/api/jobs/${res.json().data.id}`, { scheduledDate: '2026-03-05T04:00:00Z' });
    expect(upd.statusCode, upd.body).toBe(200);
    expect(upd.json().data.scheduledDate).toBe('2026-03-04');
  });

  it('contracts: startDate and endDate on create, update and amendment', async () => {
    const res = await owner.call('POST', '/api/contracts', {
      title: 'T',
      customerId,
      startDate: INSTANT,
      endDate: '2026-11-01T03:00:00Z',
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data).toMatchObject({ startDate: '2026-02-28', endDate: '2026-10-31' });
    const id = res.json().data.id;
    const upd = await owner.call('PUT', `/api/contracts/${id}`, { endDate: '2026-12-01T05:00:00Z', startDate: null });
    expect(upd.statusCode, upd.body).toBe(200);
    expect(upd.json().data).toMatchObject({ startDate: null, endDate: '2026-11-30' });
    await h.admin.db.update(contracts).set({ status: 'signed' }).where(eq(contracts.id, id));
    const am = await owner.call('POST', `/api/contracts/${id}/amendments`, { startDate: INSTANT });
    expect(am.statusCode, am.body).toBe(201);
    expect(am.json().data).toMatchObject({ startDate: '2026-02-28', endDate: '2026-11-30' });
    // The converted dates are checked against each other: an end before the start is refused.
    const bad = await owner.call('POST', '/api/contracts', {
      title: 'T',
      customerId,
      startDate: '2026-03-01',
      endDate: INSTANT,
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details[0].field).toBe('endDate');
  });

  it('refuses a date-time without an offset or an impossible date, naming the field', async () => {
    const cases: Array<[string, string, Record<string, unknown>, string]> = [
      [
        'POST',
        '/api/estimates',
        { customerId, lineItems: [line()], estimateDate: '2026-03-01T02:00:00' },
        'estimateDate',
      ],
      [
        'POST',
        '/api/estimates',
        { customerId, lineItems: [line()], expirationDate: '2026-02-30T02:00Z' },
        'expirationDate',
      ],
      ['POST', '/api/jobs', { customerId, scheduledDate: 'tomorrow' }, 'scheduledDate'],
      ['POST', '/api/jobs', { customerId, scheduledDate: '2026-03-01T24:30:00Z' }, 'scheduledDate'],
      ['POST', '/api/contracts', { title: 'T', customerId, startDate: '2026-03-01 02:00:00Z' }, 'startDate'],
    ];
    for (const [method, url, body, field] of cases) {
      const res = await owner.call(method, url, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(
        res.json().error.details.map((d: { field: string }) => d.field),
        JSON.stringify(body),
      ).toContain(field);
    }
  });

  it('keeps invoiceDate, dueDate and paymentDate date-only, as the spec types them', async () => {
    for (const body of [
      { customerId, lineItems: [line()], invoiceDate: INSTANT },
      { customerId, lineItems: [line()], dueDate: INSTANT },
    ]) {
      const res = await owner.call('POST', '/api/invoices', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
    }
    const doc = (await owner.call('GET', '/openapi.json')).json();
    const schemaText = JSON.stringify(doc);
    expect(schemaText).toContain("taken as its calendar date in the organization's timezone");
    expect(schemaText).toContain('the spec types it as a date; a date-time is 400');
  });
});
