import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf } from '../factories.js';
import { addMember, apiKeyCaller, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { customersAndEvents, rawCustomer } from './helpers.js';

const FULL = {
  firstName: ' Ann ',
  lastName: 'Lee',
  company: 'Lee Landscapes',
  customerType: 'BUSINESS',
  email: 'Ann.Lee@Example.com',
  additionalEmails: ['billing@example.com'],
  phone: '+1 (555) 010-2000',
  secondaryPhone: '555-010-2001',
  billingAddress: '12 Elm St',
  billingCity: 'Springfield',
  billingState: 'IL',
  billingZip: '62701',
  notes: 'Prefers mornings',
  tags: ['vip', 'weekly', 'vip'],
  taxExempt: true,
};

describe('customers', () => {
  let h: Harness;
  let owner: TestUser;
  let member: TestUser;
  let other: TestUser;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    member = await addMember(h, owner, 'member');
    other = await newTenant(h, { name: 'Other Org' });
  });
  afterAll(async () => h?.close());

  const create = async (user: TestUser, body: Record<string, unknown>) => {
    const res = await user.call('POST', '/api/customers', body);
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as Record<string, unknown> & { id: string };
  };

  it('creates a customer with every field and answers the REST shape; emits customer.created with it', async () => {
    const before = await eventsOf(h, owner.organizationId);
    const res = await owner.call('POST', '/api/customers', FULL);
    expect(res.statusCode).toBe(201);
    const c = res.json().data;
    expect(c).toEqual({
      id: expect.stringMatching(/^cus_/),
      name: 'Ann Lee',
      firstName: 'Ann',
      lastName: 'Lee',
      company: 'Lee Landscapes',
      customerType: 'BUSINESS',
      email: 'ann.lee@example.com',
      additionalEmails: ['billing@example.com'],
      phone: '+1 (555) 010-2000',
      secondaryPhone: '555-010-2001',
      address: '12 Elm St, Springfield, IL 62701',
      billingAddress: '12 Elm St',
      billingCity: 'Springfield',
      billingState: 'IL',
      billingZip: '62701',
      notes: 'Prefers mornings',
      tags: ['vip', 'weekly'],
      taxExempt: true,
      status: 'active',
      // 555-01xx numbers are fictional: not a valid number, so no text can go to it.
      phoneE164: null,
      smsConsent: { status: 'unknown', updatedAt: null, source: null },
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const after = await eventsOf(h, owner.organizationId);
    expect(after).toHaveLength(before.length + 1);
    expect(after.at(-1)).toEqual({
      id: expect.any(String),
      type: 'customer.created',
      depth: 0,
      data: { customerId: c.id, customer: c },
    });
    const got = await owner.call('GET', `/api/customers/${c.id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json().data).toEqual(c);
  });

  it('applies defaults and builds name and address from the parts present', async () => {
    const c = await create(owner, { firstName: 'Oak Ridge HOA' });
    expect(c).toMatchObject({
      name: 'Oak Ridge HOA',
      lastName: null,
      customerType: 'INDIVIDUAL',
      address: '',
      email: null,
      additionalEmails: [],
      tags: [],
      taxExempt: false,
      status: 'active',
    });
    const partial = await create(owner, { firstName: 'Bo', billingCity: 'Austin', billingZip: '73301' });
    expect(partial.address).toBe('Austin, 73301');
  });

  it('refuses bad input with 400 naming the field, and leaves no row and no event behind', async () => {
    const start = await customersAndEvents(h, owner.organizationId);
    const cases: Array<[unknown, string, RegExp?]> = [
      [{ lastName: 'X' }, 'firstName', /required/],
      [{ firstName: '   ' }, 'firstName'],
      [{ firstName: 'A', customerType: 'VIP' }, 'customerType', /INDIVIDUAL, BUSINESS, PROPERTY_MANAGER, HOA, OTHER/],
      [{ firstName: 'A', email: 'not-an-email' }, 'email'],
      [{ firstName: 'A', additionalEmails: ['ok@example.com', 'nope'] }, 'additionalEmails.1'],
      [{ firstName: 'A', id: 'cus_mine' }, 'id', /not an accepted field/],
      [{ firstName: 'A', organizationId: other.organizationId }, 'organizationId'],
      [{ firstName: 'A', status: 'inactive' }, 'status'],
      [{ firstName: 'A', taxExempt: 'true' }, 'taxExempt'],
      [{ firstName: 'A', tags: 'vip' }, 'tags'],
      [{ firstName: 'A', tags: [''] }, 'tags.0'],
      [{ firstName: 7 }, 'firstName'],
    ];
    for (const [body, field, message] of cases) {
      const res = await owner.call('POST', '/api/customers', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      const error = res.json().error;
      expect(error.code).toBe('VALIDATION_FAILED');
      expect(
        error.details.map((d: { field: string }) => d.field),
        JSON.stringify(body),
      ).toContain(field);
      if (message) expect(JSON.stringify(error)).toMatch(message);
    }
    const text = await owner.call('POST', '/api/customers', 'firstName=A', {
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.statusCode).toBe(415);
    expect(await customersAndEvents(h, owner.organizationId)).toEqual(start);
  });

  it('lists newest first with pagination headers, and filters by search, tag and status', async () => {
    const t = await newTenant(h);
    const a = await create(t, {
      firstName: 'Maria',
      lastName: 'Gonzalez',
      email: 'maria@green.example',
      tags: ['snow'],
    });
    const b = await create(t, { firstName: 'Peter', lastName: 'Parker', phone: '(555) 867-5309', tags: ['mow'] });
    const c = await create(t, { firstName: 'Parkside HOA', customerType: 'HOA', email: 'board@parkside.example' });
    await create(t, { firstName: '100% Lawn', email: 'x@y.example' });

    const all = await t.call('GET', '/api/customers?includeTotal=true');
    expect(all.statusCode).toBe(200);
    expect(all.headers['x-total-count']).toBe('4');
    expect(
      all
        .json()
        .data.map((x: { id: string }) => x.id)
        .slice(1),
    ).toEqual([c.id, b.id, a.id]);

    const page = await t.call('GET', '/api/customers?limit=2&page=2&includeTotal=true');
    expect(page.json().data.map((x: { id: string }) => x.id)).toEqual([b.id, a.id]);
    expect(page.headers['x-total-count']).toBe('4');
    expect(page.headers.link).toContain('rel="prev"');
    expect(page.headers.link).not.toContain('rel="next"');
    const beyond = await t.call('GET', '/api/customers?limit=2&page=9&includeTotal=true');
    expect(beyond.json().data).toEqual([]);
    expect(beyond.headers['x-total-count']).toBe('4');
    expect((await t.call('GET', '/api/customers?limit=101')).statusCode).toBe(400);
    expect((await t.call('GET', '/api/customers?page=0')).statusCode).toBe(400);
    expect((await t.call('GET', '/api/customers?status=gone')).statusCode).toBe(400);

    const ids = async (query: string) => {
      const res = await t.call('GET', `/api/customers?${query}&includeTotal=true`);
      expect(res.statusCode, query).toBe(200);
      expect(res.headers['x-total-count'], query).toBe(String(res.json().data.length));
      return res.json().data.map((x: { id: string }) => x.id);
    };
    expect(await ids('search=PARK')).toEqual([c.id, b.id]);
    expect(await ids('search=gonzalez')).toEqual([a.id]);
    expect(await ids('search=maria%20gon')).toEqual([a.id]);
    expect(await ids('search=GREEN.EXAMPLE')).toEqual([a.id]);
    expect(await ids('search=8675309')).toEqual([b.id]);
    expect(await ids(`search=${encodeURIComponent('555-867')}`)).toEqual([b.id]);
    expect(await ids(`search=${encodeURIComponent('(555) 867 53')}`)).toEqual([b.id]);
    expect(await ids(`search=${encodeURIComponent('%')}`)).toHaveLength(1);
    expect(await ids('search=zzz')).toEqual([]);
    expect(await ids('tag=snow')).toEqual([a.id]);
    expect(await ids('tag=sno')).toEqual([]);
    expect(await ids('search=park&tag=mow')).toEqual([b.id]);

    await t.call('POST', `/api/customers/${b.id}/deactivate`);
    expect(await ids('status=inactive')).toEqual([b.id]);
    expect(await ids('status=active&search=park')).toEqual([c.id]);
  });

  it('patches some fields, clears others with null, keeps search in step and emits customer.updated', async () => {
    const c = await create(owner, { firstName: 'Tom', lastName: 'Old', phone: '555 111 2222', notes: 'n' });
    const res = await owner.call('PATCH', `/api/customers/${c.id}`, {
      lastName: 'Newname',
      notes: null,
      tags: ['gold'],
      customerType: 'OTHER',
    });
    expect(res.statusCode).toBe(200);
    const updated = res.json().data;
    expect(updated).toMatchObject({ name: 'Tom Newname', notes: null, tags: ['gold'], customerType: 'OTHER' });
    expect(updated.phone).toBe('555 111 2222');
    expect(Date.parse(updated.updatedAt)).toBeGreaterThanOrEqual(Date.parse(c.updatedAt as string));
    const last = (await eventsOf(h, owner.organizationId)).at(-1);
    expect(last).toEqual({
      id: expect.any(String),
      type: 'customer.updated',
      depth: 0,
      data: { customerId: c.id, customer: updated },
    });

    const found = await owner.call('GET', '/api/customers?search=newname');
    expect(found.json().data.map((x: { id: string }) => x.id)).toEqual([c.id]);
    expect((await owner.call('GET', '/api/customers?search=tom%20old')).json().data).toEqual([]);
    const tagged = await owner.call('GET', '/api/customers?tag=gold');
    expect(tagged.json().data.map((x: { id: string }) => x.id)).toEqual([c.id]);
  });

  it('refuses bad patches without writing or emitting anything', async () => {
    const c = await create(owner, { firstName: 'Keep', email: 'keep@example.com' });
    const start = await customersAndEvents(h, owner.organizationId);
    for (const body of [{ firstName: null }, { email: 'bad' }, { name: 'Whole Name' }, { customerType: 'x' }]) {
      const res = await owner.call('PATCH', `/api/customers/${c.id}`, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
    }
    expect(await customersAndEvents(h, owner.organizationId)).toEqual(start);
    expect((await owner.call('GET', `/api/customers/${c.id}`)).json().data).toEqual(c);
  });

  it('deactivates and reactivates (409 when already there), emitting customer.updated each time', async () => {
    const c = await create(owner, { firstName: 'Flip' });
    const off = await owner.call('POST', `/api/customers/${c.id}/deactivate`);
    expect(off.statusCode).toBe(200);
    expect(off.json().data.status).toBe('inactive');
    expect((await eventsOf(h, owner.organizationId)).at(-1)).toEqual({
      id: expect.any(String),
      depth: 0,
      type: 'customer.updated',
      data: { customerId: c.id, customer: off.json().data },
    });
    const before = await customersAndEvents(h, owner.organizationId);
    const again = await owner.call('POST', `/api/customers/${c.id}/deactivate`, {});
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('INVALID_STATE');
    expect(await customersAndEvents(h, owner.organizationId)).toEqual(before);
    const on = await member.call('POST', `/api/customers/${c.id}/reactivate`, {});
    expect(on.statusCode).toBe(200);
    expect(on.json().data.status).toBe('active');
    expect((await owner.call('POST', `/api/customers/${c.id}/reactivate`)).statusCode).toBe(409);
    expect((await owner.call('POST', `/api/customers/${c.id}/deactivate`, { force: true })).statusCode).toBe(400);
  });

  it('soft-deletes: 204, hidden from reads and lists, attached properties kept, customer.deleted emitted', async () => {
    const c = await create(owner, { firstName: 'Gone', lastName: 'Soon' });
    const prop = await owner.call('POST', '/api/properties', { customerId: c.id, street: '1 Main St' });
    expect(prop.statusCode).toBe(201);
    const del = await owner.call('DELETE', `/api/customers/${c.id}`);
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    expect((await eventsOf(h, owner.organizationId)).at(-1)).toEqual({
      id: expect.any(String),
      depth: 0,
      type: 'customer.deleted',
      data: { customerId: c.id },
    });
    for (const [method, url] of [
      ['GET', `/api/customers/${c.id}`],
      ['PATCH', `/api/customers/${c.id}`],
      ['DELETE', `/api/customers/${c.id}`],
      ['POST', `/api/customers/${c.id}/deactivate`],
      ['POST', `/api/customers/${c.id}/reactivate`],
    ] as const) {
      const res = await owner.call(method, url, method === 'PATCH' ? { notes: 'x' } : undefined);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().error.code).toBe('NOT_FOUND');
    }
    const list = await owner.call('GET', '/api/customers?search=gone%20soon');
    expect(list.json().data).toEqual([]);
    expect((await owner.call('GET', `/api/properties/${prop.json().data.id}`)).statusCode).toBe(200);
    expect((await rawCustomer(h, owner.organizationId, c.id))?.deletedAt).toBeInstanceOf(Date);
    const newProp = await owner.call('POST', '/api/properties', { customerId: c.id, street: '2 Main St' });
    expect(newProp.statusCode).toBe(400);
    expect(newProp.json().error.details[0].field).toBe('customerId');
  });

  it('anonymizes irreversibly (owner/admin): personal fields and property addresses cleared, event emitted', async () => {
    const c = await create(owner, { ...FULL, firstName: 'Secret', lastName: 'Person', email: 'secret@example.com' });
    const prop = await owner.call('POST', '/api/properties', {
      customerId: c.id,
      name: 'Home',
      street: '9 Hidden Ln',
      city: 'Springfield',
      gateCode: '4321',
      accessNotes: 'Key under the mat',
      lat: 40.1,
      lng: -89.6,
    });
    const before = await customersAndEvents(h, owner.organizationId);
    const denied = await member.call('POST', `/api/customers/${c.id}/anonymize`);
    expect(denied.statusCode).toBe(403);
    expect(await customersAndEvents(h, owner.organizationId)).toEqual(before);
    expect(denied.json().error.code).toBe('FORBIDDEN');
    expect((await rawCustomer(h, owner.organizationId, c.id))?.firstName).toBe('Secret');

    const res = await owner.call('POST', `/api/customers/${c.id}/anonymize`);
    expect(res.statusCode).toBe(200);
    const anon = res.json().data;
    expect(anon).toMatchObject({
      id: c.id,
      name: 'Anonymized',
      firstName: 'Anonymized',
      lastName: null,
      company: null,
      email: null,
      additionalEmails: [],
      phone: null,
      secondaryPhone: null,
      address: '',
      notes: null,
      tags: [],
      customerType: 'BUSINESS',
      taxExempt: true,
    });
    expect((await eventsOf(h, owner.organizationId)).at(-1)).toEqual({
      id: expect.any(String),
      depth: 0,
      type: 'customer.updated',
      data: { customerId: c.id, customer: anon },
    });
    // The stored row keeps nothing personal. Ids and timestamps are left out of the search:
    // a time ending in .555 Z is no phone number.
    const {
      id: _id,
      organizationId: _org,
      createdAt: _c,
      updatedAt: _u,
      anonymizedAt: _a,
      ...stored
    } = (await rawCustomer(h, owner.organizationId, c.id)) ?? {};
    expect(Object.keys(stored)).toContain('phone');
    expect(JSON.stringify(stored)).not.toMatch(/secret|person|555|elm|mornings/i);
    const p = (await owner.call('GET', `/api/properties/${prop.json().data.id}`)).json().data;
    expect(p).toMatchObject({
      street: 'Anonymized',
      name: null,
      city: null,
      gateCode: null,
      accessNotes: null,
      lat: null,
    });
    expect((await owner.call('GET', '/api/customers?search=secret')).json().data).toEqual([]);
    expect(
      (await owner.call('GET', '/api/customers?tag=vip')).json().data.map((x: { id: string }) => x.id),
    ).not.toContain(c.id);
    const twice = await owner.call('POST', `/api/customers/${c.id}/anonymize`);
    expect(twice.statusCode).toBe(409);
  });

  it('anonymizes and hard-deletes a soft-deleted customer too (erasure reaches tombstones)', async () => {
    const c = await create(owner, { firstName: 'Tomb', email: 'tomb@example.com' });
    await owner.call('DELETE', `/api/customers/${c.id}`);
    const anon = await owner.call('POST', `/api/customers/${c.id}/anonymize`);
    expect(anon.statusCode).toBe(200);
    expect((await rawCustomer(h, owner.organizationId, c.id))?.email).toBeNull();
    expect((await owner.call('DELETE', `/api/customers/${c.id}/hard-delete`)).statusCode).toBe(204);
    expect(await rawCustomer(h, owner.organizationId, c.id)).toBeUndefined();
  });

  it('hard-deletes (owner/admin) the customer and everything attached in one go; customer.deleted carries the id only', async () => {
    const admin = await addMember(h, owner, 'admin');
    const c = await create(owner, { firstName: 'Erase', lastName: 'Me' });
    const prop = (await owner.call('POST', '/api/properties', { customerId: c.id, street: '5 Oak Ave' })).json().data;

    const before = await customersAndEvents(h, owner.organizationId);
    const denied = await member.call('DELETE', `/api/customers/${c.id}/hard-delete`);
    expect(denied.statusCode).toBe(403);
    expect(await customersAndEvents(h, owner.organizationId)).toEqual(before);
    expect(await rawCustomer(h, owner.organizationId, c.id)).toBeDefined();

    const res = await admin.call('DELETE', `/api/customers/${c.id}/hard-delete`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(await rawCustomer(h, owner.organizationId, c.id)).toBeUndefined();
    expect((await owner.call('GET', `/api/properties/${prop.id}`)).statusCode).toBe(404);
    expect((await eventsOf(h, owner.organizationId)).at(-1)).toEqual({
      id: expect.any(String),
      depth: 0,
      type: 'customer.deleted',
      data: { customerId: c.id },
    });
    expect((await owner.call('DELETE', `/api/customers/${c.id}/hard-delete`)).statusCode).toBe(404);
    expect((await owner.call('GET', `/api/customers/${c.id}`)).statusCode).toBe(404);
  });

  it("never touches another organization's customer: every operation is a 404 and nothing changes", async () => {
    const c = await create(owner, { firstName: 'Mine', email: 'mine@example.com' });
    const start = await customersAndEvents(h, owner.organizationId);
    const otherAdmin = other;
    for (const [method, url, body] of [
      ['GET', `/api/customers/${c.id}`],
      ['PATCH', `/api/customers/${c.id}`, { firstName: 'Stolen' }],
      ['DELETE', `/api/customers/${c.id}`],
      ['POST', `/api/customers/${c.id}/deactivate`],
      ['POST', `/api/customers/${c.id}/anonymize`],
      ['DELETE', `/api/customers/${c.id}/hard-delete`],
    ] as const) {
      const res = await otherAdmin.call(method, url, body);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
    }
    expect((await other.call('GET', '/api/customers?search=mine')).json().data).toEqual([]);
    expect(await customersAndEvents(h, owner.organizationId)).toEqual(start);
    expect((await owner.call('GET', `/api/customers/${c.id}`)).json().data).toEqual(c);
    const unknown = await owner.call('GET', '/api/customers/cus_doesnotexist000000000');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toMatchObject({ code: 'NOT_FOUND', message: 'Customer not found' });
  });

  it('documents every route in /openapi.json', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const path of [
      '/api/customers',
      '/api/customers/{id}',
      '/api/customers/{id}/deactivate',
      '/api/customers/{id}/reactivate',
      '/api/customers/{id}/anonymize',
      '/api/customers/{id}/hard-delete',
      '/api/properties',
      '/api/properties/{id}',
      '/api/services',
      '/api/services/{id}',
      '/api/settings',
    ]) {
      expect(doc.paths[path], path).toBeDefined();
    }
    const create = doc.paths['/api/customers'].post;
    expect(create.responses['201']).toBeDefined();
    expect(JSON.stringify(create.requestBody)).toContain('PROPERTY_MANAGER');
  });

  it('serializes concurrent status changes: one wins, the other sees the new state', async () => {
    const c = await create(owner, { firstName: 'Race' });
    const results = await Promise.all([
      owner.call('POST', `/api/customers/${c.id}/deactivate`),
      owner.call('POST', `/api/customers/${c.id}/deactivate`),
    ]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    const events = (await eventsOf(h, owner.organizationId)).filter(
      (e) => (e.data as { customerId?: string }).customerId === c.id,
    );
    expect(events.map((e) => e.type)).toEqual(['customer.created', 'customer.updated']);
  });

  it('works with an API key (Business plan) as with a session', async () => {
    const key = await apiKeyCaller(h, owner, 'member');
    const res = await key.call('POST', '/api/customers', { firstName: 'Via Key' });
    expect(res.statusCode).toBe(201);
    expect((await key.call('GET', `/api/customers/${res.json().data.id}`)).statusCode).toBe(200);
    expect((await key.call('POST', `/api/customers/${res.json().data.id}/anonymize`)).statusCode).toBe(403);
  });
});
