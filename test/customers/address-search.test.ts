import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/**
 * `search=Oak Ave` finds customers by address (issue 48): the billing address and every
 * property's address, kept in step as properties are added, moved, erased and deleted.
 */
describe('customer search over addresses', () => {
  let h: Harness;
  let owner: TestUser;
  let other: TestUser;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    other = await newTenant(h);
  });
  afterAll(async () => h?.close());

  const found = async (who: TestUser, search: string) =>
    (await who.call('GET', '/api/customers', undefined, { query: { search } }))
      .json()
      .data.map((c: { id: string }) => c.id) as string[];

  async function customer(who: TestUser, body: Record<string, unknown>): Promise<string> {
    const res = await who.call('POST', '/api/customers', body);
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.id;
  }
  async function property(who: TestUser, customerId: string, body: Record<string, unknown>): Promise<string> {
    const res = await who.call('POST', '/api/properties', { customerId, ...body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.id;
  }

  it('finds a customer by its billing address and by each property’s address, in its organization only', async () => {
    const ann = await customer(owner, { firstName: 'Ann', billingAddress: '12 Elm St', billingCity: 'Springfield' });
    const bob = await customer(owner, { firstName: 'Bob' });
    await property(owner, bob, { street: '400 Oak Ave', city: 'Shelbyville', zip: '62565' });
    await property(owner, bob, { street: '7 Birch Rd', city: 'Capital City' });
    const foreign = await customer(other, { firstName: 'Cy' });
    await property(other, foreign, { street: '401 Oak Ave', city: 'Shelbyville' });

    expect(await found(owner, 'elm st')).toEqual([ann]);
    expect(await found(owner, 'Oak Ave')).toEqual([bob]);
    expect(await found(owner, 'birch rd capital')).toEqual([bob]);
    expect(await found(owner, '62565')).toEqual([bob]);
    expect(await found(other, 'Oak Ave')).toEqual([foreign]);
    // A term never matches across two fields (the name and a street).
    expect(await found(owner, 'bob 400')).toEqual([]);
    // The name still finds them.
    expect(await found(owner, 'Bob')).toEqual([bob]);
  });

  it('keeps the addresses in step: a changed street, a deleted property, a renamed customer, an anonymized one', async () => {
    const dee = await customer(owner, { firstName: 'Dee' });
    const home = await property(owner, dee, { street: '5 Maple Ct', city: 'Ogdenville' });
    expect(await found(owner, 'maple ct')).toEqual([dee]);

    expect((await owner.call('PATCH', `/api/properties/${home}`, { street: '9 Cedar Ln' })).statusCode).toBe(200);
    expect(await found(owner, 'maple ct')).toEqual([]);
    expect(await found(owner, 'cedar ln')).toEqual([dee]);

    // Renaming the customer keeps its properties' addresses searchable.
    expect((await owner.call('PATCH', `/api/customers/${dee}`, { firstName: 'Deedee' })).statusCode).toBe(200);
    expect(await found(owner, 'cedar ln')).toEqual([dee]);
    expect(await found(owner, 'deedee')).toEqual([dee]);

    expect((await owner.call('DELETE', `/api/properties/${home}`)).statusCode).toBe(204);
    expect(await found(owner, 'cedar ln')).toEqual([]);

    const eve = await customer(owner, { firstName: 'Eve', billingAddress: '3 Pine St' });
    await property(owner, eve, { street: '8 Willow Way' });
    expect((await owner.call('POST', `/api/customers/${eve}/anonymize`)).statusCode).toBe(200);
    expect(await found(owner, 'willow')).toEqual([]);
    expect(await found(owner, 'pine st')).toEqual([]);
  });
});
