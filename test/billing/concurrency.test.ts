import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer, eventsOf, line } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/*
 * Real concurrency on PostgreSQL (requests overlap across a pool of connections);
 * on PGlite the same requests run one transaction at a time and must give the
 * same answers.
 */
describe('billing under concurrency', () => {
  let h: Harness;
  let owner: TestUser;
  let customerId: string;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    customerId = (await createCustomer(h, owner)).id;
  });
  afterAll(async () => h?.close());

  it('50 concurrent payments never overpay, never double-count', async () => {
    // Total 30.00; 50 payments of 1.00 race for it: exactly 30 may succeed.
    const inv = (await owner.call('POST', '/api/invoices', { customerId, lineItems: [line('Work', 3, 10)] })).json()
      .data;
    await owner.call('POST', `/api/invoices/${inv.id}/send`);
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        owner.call('POST', `/api/invoices/${inv.id}/payments`, { amount: 1, method: 'cash' }),
      ),
    );
    const codes = results.map((r) => r.statusCode);
    const created = codes.filter((c) => c === 201).length;
    expect(created).toBe(30);
    // The 30th payment made it paid: later ones hit a paid invoice (409), none slipped past the balance check.
    expect(codes.filter((c) => c !== 201).every((c) => c === 409 || c === 400)).toBe(true);
    const final = (await owner.call('GET', `/api/invoices/${inv.id}`)).json().data;
    expect(final).toMatchObject({ status: 'paid', amountPaid: 30, balance: 0 });
    expect(final.payments).toHaveLength(30);
    expect(final.payments.reduce((s: number, p: { amount: number }) => s + p.amount, 0)).toBe(30);
    for (const r of results.filter((x) => x.statusCode === 201)) {
      const body = r.json().data;
      expect(body.balance).toBeGreaterThanOrEqual(0);
      expect(body.amountPaid).toBeLessThanOrEqual(30);
    }
    const events = (await eventsOf(h, owner.organizationId)).filter((e) => e.data.invoiceId === inv.id);
    expect(events.filter((e) => e.type === 'payment.received')).toHaveLength(30);
    expect(events.filter((e) => e.type === 'invoice.paid')).toHaveLength(1);
  });

  it('20 parallel creates get INV-000001.. without gaps or duplicates', async () => {
    const fresh = await newTenant(h, { name: 'Numbering Co' });
    const c = await createCustomer(h, fresh);
    const results = await Promise.all(
      Array.from({ length: 20 }, () => fresh.call('POST', '/api/invoices', { customerId: c.id, lineItems: [line()] })),
    );
    expect(results.map((r) => r.statusCode)).toEqual(Array(20).fill(201));
    const numbers = results.map((r) => r.json().data.invoiceNumber as string).sort();
    expect(numbers).toEqual(Array.from({ length: 20 }, (_, i) => `INV-${String(i + 1).padStart(6, '0')}`));

    const estimates = await Promise.all(
      Array.from({ length: 10 }, () => fresh.call('POST', '/api/estimates', { customerId: c.id, lineItems: [line()] })),
    );
    expect(estimates.map((r) => r.json().data.estimateNumber as string).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => `EST-${String(i + 1).padStart(6, '0')}`),
    );
  });
});
