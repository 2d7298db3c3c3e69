import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { accountBalances, newBill, newVendor, pay } from './helpers.js';

/*
 * Real overlap on PostgreSQL (a pool of connections); PGlite runs the same
 * requests one transaction at a time and must give the same answers.
 */
describe('bill payments under concurrency', () => {
  let h: Harness;
  let owner: TestUser;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
  });
  afterAll(async () => h?.close());

  it('two payments racing for the last balance of one bill: exactly one wins', async () => {
    const vendor = await newVendor(owner);
    const bill = await newBill(owner, vendor.id, 100);
    expect((await pay(owner, vendor.id, [{ billId: bill.id, amount: 60 }])).statusCode).toBe(201);
    const results = await Promise.all([
      pay(owner, vendor.id, [{ billId: bill.id, amount: 40 }]),
      pay(owner, vendor.id, [{ billId: bill.id, amount: 40 }]),
    ]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 400]);
    const loser = results.find((r) => r.statusCode === 400);
    expect(loser?.json().error.details[0].field).toMatch(/^allocations\[0\]\.(amount|billId)$/);
    expect((await owner.call('GET', `/api/bills/${bill.id}`)).json().data).toMatchObject({
      status: 'paid',
      amountPaid: 100,
      balance: 0,
    });
    const events = (await eventsOf(h, owner.organizationId)).filter((e) => e.type === 'bill.paid');
    expect(events).toHaveLength(1);
    expect((await accountBalances(h, owner.organizationId)).get('2000')).toBe(0);
  });

  it('payments over overlapping bills in opposite orders neither deadlock nor overpay', async () => {
    const vendor = await newVendor(owner, { name: 'Two bills' });
    const a = await newBill(owner, vendor.id, 10);
    const b = await newBill(owner, vendor.id, 10);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        pay(
          owner,
          vendor.id,
          i % 2 === 0
            ? [
                { billId: a.id, amount: 3 },
                { billId: b.id, amount: 3 },
              ]
            : [
                { billId: b.id, amount: 3 },
                { billId: a.id, amount: 3 },
              ],
        ),
      ),
    );
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(3);
    expect(results.every((r) => r.statusCode === 201 || r.statusCode === 400)).toBe(true);
    for (const id of [a.id, b.id]) {
      expect((await owner.call('GET', `/api/bills/${id}`)).json().data).toMatchObject({ amountPaid: 9, balance: 1 });
    }
  });
});
