import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

describe('properties', () => {
  let h: Harness;
  let owner: TestUser;
  let other: TestUser;
  let customerId: string;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    other = await newTenant(h, { name: 'Other' });
    customerId = (await owner.call('POST', '/api/customers', { firstName: 'Prop Owner' })).json().data.id;
  });
  afterAll(async () => h?.close());

  it('creates, reads, lists by customer, patches and deletes a service address', async () => {
    const res = await owner.call('POST', '/api/properties', {
      customerId,
      name: 'Lake house',
      street: ' 1 Shore Rd ',
      city: 'Madison',
      state: 'WI',
      zip: '53703',
      accessNotes: 'Dog in back',
      gateCode: '#1234',
      lotSize: 12000,
      lat: 43.07,
      lng: -89.4,
    });
    expect(res.statusCode).toBe(201);
    const p = res.json().data;
    expect(p).toEqual({
      id: expect.stringMatching(/^prp_/),
      customerId,
      name: 'Lake house',
      street: '1 Shore Rd',
      city: 'Madison',
      state: 'WI',
      zip: '53703',
      address: '1 Shore Rd, Madison, WI 53703',
      accessNotes: 'Dog in back',
      gateCode: '#1234',
      lotSize: 12000,
      lat: 43.07,
      lng: -89.4,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const second = (await owner.call('POST', '/api/properties', { customerId, street: '2 Hill St' })).json().data;
    const otherCustomer = (await owner.call('POST', '/api/customers', { firstName: 'Else' })).json().data.id;
    await owner.call('POST', '/api/properties', { customerId: otherCustomer, street: '3 Vale' });

    const list = await owner.call('GET', `/api/properties?customerId=${customerId}&includeTotal=true`);
    expect(list.headers['x-total-count']).toBe('2');
    expect(list.json().data.map((x: { id: string }) => x.id)).toEqual([second.id, p.id]);
    expect((await owner.call('GET', '/api/properties?includeTotal=true')).headers['x-total-count']).toBe('3');
    expect((await owner.call('GET', `/api/properties/${p.id}`)).json().data).toEqual(p);

    const patched = await owner.call('PATCH', `/api/properties/${p.id}`, { gateCode: null, lat: null, lng: null });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().data).toMatchObject({ gateCode: null, lat: null, lng: null, street: '1 Shore Rd' });

    const del = await owner.call('DELETE', `/api/properties/${p.id}`);
    expect(del.statusCode).toBe(204);
    expect((await owner.call('GET', `/api/properties/${p.id}`)).statusCode).toBe(404);
    expect((await owner.call('DELETE', `/api/properties/${p.id}`)).statusCode).toBe(404);
  });

  it('refuses bad input with 400 naming the field', async () => {
    const before = (await owner.call('GET', '/api/properties?includeTotal=true')).headers['x-total-count'];
    const foreignCustomer = (await other.call('POST', '/api/customers', { firstName: 'Theirs' })).json().data.id;
    const cases: Array<[unknown, string]> = [
      [{ street: '1 A St' }, 'customerId'],
      [{ customerId, street: '' }, 'street'],
      [{ customerId }, 'street'],
      [{ customerId, street: '1 A', lat: 91, lng: 0 }, 'lat'],
      [{ customerId, street: '1 A', lat: 0, lng: -181 }, 'lng'],
      [{ customerId, street: '1 A', lat: 10 }, 'lng'],
      [{ customerId, street: '1 A', lotSize: 1.5 }, 'lotSize'],
      [{ customerId, street: '1 A', owner: 'x' }, 'owner'],
      [{ customerId: 'cus_nope', street: '1 A' }, 'customerId'],
      [{ customerId: foreignCustomer, street: '1 A' }, 'customerId'],
    ];
    for (const [body, field] of cases) {
      const res = await owner.call('POST', '/api/properties', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(
        res.json().error.details.map((d: { field: string }) => d.field),
        JSON.stringify(body),
      ).toContain(field);
    }
    const p = (await owner.call('POST', '/api/properties', { customerId, street: '7 Oak', lat: 1, lng: 2 })).json()
      .data;
    const half = await owner.call('PATCH', `/api/properties/${p.id}`, { lng: null });
    expect(half.statusCode).toBe(400);
    expect(half.json().error.details[0].field).toBe('lng');
    expect((await owner.call('PATCH', `/api/properties/${p.id}`, { customerId: foreignCustomer })).statusCode).toBe(
      400,
    );
    expect((await owner.call('PATCH', `/api/properties/${p.id}`, { street: '  ' })).statusCode).toBe(400);
    expect((await owner.call('GET', '/api/properties?includeTotal=true')).headers['x-total-count']).toBe(
      String(Number(before) + 1),
    );
  });

  it("hides another organization's properties", async () => {
    const p = (await owner.call('POST', '/api/properties', { customerId, street: '8 Private Rd' })).json().data;
    expect((await other.call('GET', `/api/properties/${p.id}`)).statusCode).toBe(404);
    expect((await other.call('PATCH', `/api/properties/${p.id}`, { name: 'x' })).statusCode).toBe(404);
    expect((await other.call('DELETE', `/api/properties/${p.id}`)).statusCode).toBe(404);
    expect((await other.call('GET', `/api/properties?customerId=${customerId}`)).json().data).toEqual([]);
    expect((await owner.call('GET', `/api/properties/${p.id}`)).json().data.name).toBeNull();
  });
});

describe('services catalog', () => {
  let h: Harness;
  let owner: TestUser;
  let member: TestUser;
  let other: TestUser;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    member = await addMember(h, owner, 'member');
    other = await newTenant(h, { name: 'Other' });
  });
  afterAll(async () => h?.close());

  it('creates with defaults, keeps money exact, lists, filters, patches and deletes', async () => {
    const res = await owner.call('POST', '/api/services', { name: 'Weekly mowing', unitPrice: 45.1 });
    expect(res.statusCode).toBe(201);
    const s = res.json().data;
    expect(s).toEqual({
      id: expect.stringMatching(/^svc_/),
      name: 'Weekly mowing',
      description: null,
      unit: 'each',
      unitPrice: 45.1,
      taxable: true,
      active: true,
      bookable: false,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const salt = (
      await member.call('POST', '/api/services', {
        name: 'Salting',
        description: 'Per acre',
        unit: 'acre',
        unitPrice: 0.29,
        taxable: false,
        active: false,
      })
    ).json().data;
    expect(salt).toMatchObject({ unit: 'acre', unitPrice: 0.29, taxable: false, active: false });

    expect((await owner.call('GET', '/api/services')).json().data.map((x: { id: string }) => x.id)).toEqual([
      salt.id,
      s.id,
    ]);
    const active = await owner.call('GET', '/api/services?active=true&includeTotal=true');
    expect(active.json().data.map((x: { id: string }) => x.id)).toEqual([s.id]);
    expect(active.headers['x-total-count']).toBe('1');
    expect((await owner.call('GET', '/api/services?active=false')).json().data[0].id).toBe(salt.id);

    const patched = await owner.call('PATCH', `/api/services/${s.id}`, { unitPrice: 1000000, unit: 'visit' });
    expect(patched.json().data).toMatchObject({ unitPrice: 1000000, unit: 'visit', name: 'Weekly mowing' });
    expect((await owner.call('GET', `/api/services/${s.id}`)).json().data.unitPrice).toBe(1000000);

    expect((await owner.call('DELETE', `/api/services/${s.id}`)).statusCode).toBe(204);
    expect((await owner.call('GET', `/api/services/${s.id}`)).statusCode).toBe(404);
  });

  it('refuses bad input with 400 naming the field, writing nothing', async () => {
    const cases: Array<[unknown, string]> = [
      [{ unitPrice: 1 }, 'name'],
      [{ name: 'X' }, 'unitPrice'],
      [{ name: 'X', unitPrice: 1.005 }, 'unitPrice'],
      [{ name: 'X', unitPrice: -1 }, 'unitPrice'],
      [{ name: 'X', unitPrice: '10' }, 'unitPrice'],
      [{ name: 'X', unitPrice: 1, unit: 'gallon' }, 'unit'],
      [{ name: 'X', unitPrice: 1, id: 'svc_x' }, 'id'],
    ];
    for (const [body, field] of cases) {
      const res = await owner.call('POST', '/api/services', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(
        res.json().error.details.map((d: { field: string }) => d.field),
        JSON.stringify(body),
      ).toContain(field);
    }
    const unit = await owner.call('POST', '/api/services', { name: 'X', unitPrice: 1, unit: 'gallon' });
    expect(unit.json().error.message).toMatch(/each, hour, visit, sqft, acre, yard, month, other/);
    expect((await owner.call('GET', '/api/services?active=true&includeTotal=true')).headers['x-total-count']).toBe('0');
    const s = (await owner.call('POST', '/api/services', { name: 'Keep', unitPrice: 5 })).json().data;
    expect((await owner.call('PATCH', `/api/services/${s.id}`, { unitPrice: 0.001 })).statusCode).toBe(400);
    expect((await owner.call('GET', `/api/services/${s.id}`)).json().data.unitPrice).toBe(5);
  });

  it("hides another organization's services", async () => {
    const s = (await owner.call('POST', '/api/services', { name: 'Mine', unitPrice: 5 })).json().data;
    expect((await other.call('GET', `/api/services/${s.id}`)).statusCode).toBe(404);
    expect((await other.call('PATCH', `/api/services/${s.id}`, { unitPrice: 0 })).statusCode).toBe(404);
    expect((await other.call('DELETE', `/api/services/${s.id}`)).statusCode).toBe(404);
    expect((await other.call('GET', '/api/services')).json().data).toEqual([]);
    expect((await owner.call('GET', `/api/services/${s.id}`)).json().data.unitPrice).toBe(5);
  });
});
