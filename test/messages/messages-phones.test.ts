import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customers } from '../../src/db/schema/index.js';
import { backfillPhones, readPhonesOnce } from '../../src/modules/customers/customers.phones.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/*
 * operations.md §10: phoneE164 is `phone` read with the organization's country. Customers made
 * before drizzle/0039 have a phone and no phoneE164 (the backfill reads them); a country change
 * reads every customer's phone again (marked in the settings change, read by the worker).
 */

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => h?.close());

async function customer(owner: TestUser, phone: string) {
  const res = await owner.call('POST', '/api/customers', { firstName: 'Ann', phone });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { id: string; phoneE164: string | null };
}

const phones = async (owner: TestUser, ids: string[]) => {
  const rows = await h.admin.db
    .select({ id: customers.id, phoneE164: customers.phoneE164, phoneCountry: customers.phoneCountry })
    .from(customers)
    .where(and(eq(customers.organizationId, owner.organizationId), inArray(customers.id, ids)));
  return Object.fromEntries(rows.map((r) => [r.id, { e164: r.phoneE164, country: r.phoneCountry }]));
};

describe('customers’ phones in E.164', () => {
  it('the backfill reads customers made before 0039 (a phone, no phoneE164), in batches, and is idempotent', async () => {
    const owner = await newTenant(h, { name: 'Old Customers' });
    const made = [];
    for (let i = 0; i < 7; i++) made.push(await customer(owner, `(415) 555-26${String(10 + i)}`));
    const bad = await customer(owner, '555-01');
    const ids = [...made.map((c) => c.id), bad.id];
    // As they were before drizzle/0039 and 0045: a phone, nothing read.
    await h.admin.db
      .update(customers)
      .set({ phoneE164: null, phoneCountry: null })
      .where(and(eq(customers.organizationId, owner.organizationId), inArray(customers.id, ids)));

    const passes: number[] = [];
    const read = await backfillPhones(h.database, owner.organizationId, (n) => passes.push(n));
    expect(read).toBe(8);
    const after = await phones(owner, ids);
    expect(after[made[0]?.id as string]).toEqual({ e164: '+14155552610', country: 'US' });
    expect(after[made[6]?.id as string]).toEqual({ e164: '+14155552616', country: 'US' });
    expect(after[bad.id]).toEqual({ e164: null, country: 'US' });
    const api = await owner.call('GET', `/api/customers/${made[3]?.id}`);
    expect(api.json().data.phoneE164).toBe('+14155552613');

    // Again: nothing left to read, nothing changes.
    expect(await backfillPhones(h.database, owner.organizationId)).toBe(0);
    expect(await readPhonesOnce(h.database, 20, owner.organizationId)).toBe(0);
    expect(await phones(owner, ids)).toEqual(after);
  });

  it('a country change reads every customer’s phone again with the new country', async () => {
    const owner = await newTenant(h, { name: 'Moving Co' });
    const local = await customer(owner, '07911 123456');
    const intl = await customer(owner, '+1 415 555 2671');
    const none = await owner.call('POST', '/api/customers', { firstName: 'No phone' });
    expect(local.phoneE164).toBeNull();
    expect(intl.phoneE164).toBe('+14155552671');

    const res = await owner.call('PATCH', '/api/settings', { country: 'GB' });
    expect(res.statusCode, res.body).toBe(200);
    // Marked in the settings change's transaction; the worker reads them.
    const marked = await phones(owner, [local.id, intl.id]);
    expect(marked[local.id]?.country).toBeNull();
    expect(marked[intl.id]?.country).toBeNull();
    expect(await readPhonesOnce(h.database, 20, owner.organizationId)).toBe(2);
    expect(await phones(owner, [local.id, intl.id, none.json().data.id])).toEqual({
      [local.id]: { e164: '+447911123456', country: 'GB' },
      [intl.id]: { e164: '+14155552671', country: 'GB' },
      [none.json().data.id]: { e164: null, country: null },
    });
    // A customer made after the change is read with the new country at once.
    expect((await customer(owner, '07911 123457')).phoneE164).toBe('+447911123457');

    // The same country again, or another setting, marks nothing.
    await owner.call('PATCH', '/api/settings', { country: 'GB', currency: 'GBP' });
    expect(await readPhonesOnce(h.database, 20, owner.organizationId)).toBe(0);
  });

  it('a refused settings change marks nothing', async () => {
    const owner = await newTenant(h, { name: 'Stays Put' });
    const c = await customer(owner, '(415) 555-2699');
    const res = await owner.call('PATCH', '/api/settings', { country: 'GB', currency: 'XXXX' });
    expect(res.statusCode).toBe(400);
    expect((await phones(owner, [c.id]))[c.id]).toEqual({ e164: '+14155552699', country: 'US' });
  });
});
