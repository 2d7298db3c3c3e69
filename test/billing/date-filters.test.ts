import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer, line } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/*
 * invoiceDate is a calendar date, so a date-only bound compares dates; a
 * date-time bound is turned into the organization-timezone date it falls on.
 * America/New_York switches to daylight time on 2026-03-08 (UTC−5 → UTC−4).
 */
describe('invoice list date filters in a non-UTC organization across DST', () => {
  let h: Harness;
  let owner: TestUser;
  let customerId: string;
  const byDate = new Map<string, string>();

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h, { timezone: 'America/New_York' });
    customerId = (await createCustomer(h, owner)).id;
    for (const d of ['2026-03-06', '2026-03-07', '2026-03-08', '2026-03-09', '2026-03-10']) {
      const res = await owner.call('POST', '/api/invoices', { customerId, lineItems: [line()], invoiceDate: d });
      byDate.set(res.json().data.id, d);
    }
  });
  afterAll(async () => h?.close());

  const dates = async (query: string) => {
    const res = await owner.call('GET', `/api/invoices?customerId=${customerId}&${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data as Array<{ invoiceDate: string }>).map((i) => i.invoiceDate).sort();
  };

  it('date-only bounds are whole days, end inclusive', async () => {
    expect(await dates('startDate=2026-03-07&endDate=2026-03-08')).toEqual(['2026-03-07', '2026-03-08']);
    expect(await dates('startDate=2026-03-08&endDate=2026-03-08')).toEqual(['2026-03-08']);
    expect(await dates('startDate=2026-03-09')).toEqual(['2026-03-09', '2026-03-10']);
    expect(await dates('endDate=2026-03-06')).toEqual(['2026-03-06']);
  });

  it('accepts the aliases, and the canonical name wins when both are sent', async () => {
    expect(await dates('dateFrom=2026-03-09&dateTo=2026-03-09')).toEqual(['2026-03-09']);
    expect(await dates('dateFrom=2026-03-06&endDate=2026-03-07&dateTo=2026-03-10')).toEqual([
      '2026-03-06',
      '2026-03-07',
    ]);
    expect(await dates('startDate=2026-03-10&dateFrom=2026-03-06')).toEqual(['2026-03-10']);
  });

  it('date-time bounds use the New York calendar date on both sides of the DST change', async () => {
    // 06:30Z on 03-08 is 01:30 EST on 03-08; 03:30Z on 03-09 is 23:30 EDT on 03-08 (UTC would say 03-09).
    expect(await dates('startDate=2026-03-08T06:30:00Z&endDate=2026-03-09T03:30:00Z')).toEqual(['2026-03-08']);
    // 04:59Z on 03-08 is still 23:59 EST on 03-07.
    expect(await dates('endDate=2026-03-08T04:59:00Z')).toEqual(['2026-03-06', '2026-03-07']);
    // With an explicit offset.
    expect(await dates('startDate=2026-03-09T23:30:00-04:00')).toEqual(['2026-03-09', '2026-03-10']);
  });

  it('refuses malformed bounds with 400 naming the field', async () => {
    for (const [q, field] of [
      ['startDate=2026-02-30', 'startDate'],
      ['dateFrom=tomorrow', 'dateFrom'],
      ['endDate=2026-03-08T10:00:00', 'endDate'],
      ['dateTo=2026-13-01', 'dateTo'],
    ]) {
      const res = await owner.call('GET', `/api/invoices?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().error.details[0].field).toBe(field);
    }
  });
});
