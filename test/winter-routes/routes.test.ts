import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { winterRouteStops, winterRoutes } from '../../src/db/schema/index.js';
import { countRows } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { customer, property, route, stop } from './helpers.js';

let h: Harness;
let owner: TestUser;
let other: TestUser;
let cus: string;

beforeAll(async () => {
  h = await createHarness();
  owner = await newTenant(h);
  other = await newTenant(h, { name: 'Other' });
  cus = await customer(owner);
});
afterAll(async () => h?.close());

const details = (res: { json(): { error: { code: string; details?: Array<{ field: string }> } } }) => res.json().error;

describe('routes and stops', () => {
  it('creates a route with ordered stops (sequence from 1, trigger 2 by default), reads, lists, updates', async () => {
    const a = await property(owner, cus, { lat: 44.47, lng: -73.21 });
    const b = await property(owner, cus, { lat: 44.48, lng: -73.2 }, '2 Elm St');
    const created = await route(owner, {
      depot: { lat: 44.46, lng: -73.22 },
      stops: [
        stop(a, { services: ['plow', 'salt'], billing: { mode: 'per_event', price: 60.5 }, notes: 'gate' }),
        stop(b, { triggerInches: 1 }),
      ],
    });
    expect(created).toMatchObject({ active: true, crewId: null, depot: { lat: 44.46, lng: -73.22 } });
    expect(created.stops).toMatchObject([
      {
        propertyId: a,
        sequence: 1,
        triggerInches: 2,
        services: ['plow', 'salt'],
        billing: { mode: 'per_event', price: 60.5 },
        notes: 'gate',
      },
      { propertyId: b, sequence: 2, triggerInches: 1, billing: { mode: 'per_push', price: 45 } },
    ]);
    const got = await owner.call('GET', `/api/winter-routes/${created.id}`);
    expect(got.json().data).toEqual(created);

    const off = await owner.call('PATCH', `/api/winter-routes/${created.id}`, { active: false, depot: null });
    expect(off.json().data).toMatchObject({ active: false, depot: null });
    const inactive = await owner.call('GET', '/api/winter-routes', undefined, { query: { active: 'false' } });
    expect(inactive.json().data.map((r: { id: string }) => r.id)).toContain(created.id);
    const active = await owner.call('GET', '/api/winter-routes', undefined, { query: { active: 'true' } });
    expect(active.json().data.map((r: { id: string }) => r.id)).not.toContain(created.id);
    const on = await owner.call('PATCH', `/api/winter-routes/${created.id}`, { active: true });
    expect(on.json().data.active).toBe(true);
  });

  it('PUT /stops replaces the list in the given order; a property that stays keeps its stop id', async () => {
    const a = await property(owner, cus, null);
    const b = await property(owner, cus, null, '2 Oak St');
    const c = await property(owner, cus, null, '3 Oak St');
    const r = await route(owner, { stops: [stop(a), stop(b)] });
    const res = await owner.call('PUT', `/api/winter-routes/${r.id}/stops`, { stops: [stop(c), stop(a)] });
    expect(res.statusCode).toBe(200);
    const stops = res.json().data.stops as Array<{ id: string; propertyId: string; sequence: number }>;
    expect(stops.map((s) => [s.propertyId, s.sequence])).toEqual([
      [c, 1],
      [a, 2],
    ]);
    expect(stops[1]?.id).toBe(r.stops[0]?.id);
    const empty = await owner.call('PUT', `/api/winter-routes/${r.id}/stops`, { stops: [] });
    expect(empty.json().data.stops).toEqual([]);
    expect((await owner.call('DELETE', `/api/winter-routes/${r.id}`)).statusCode).toBe(204);
    expect((await owner.call('GET', `/api/winter-routes/${r.id}`)).statusCode).toBe(404);
  });

  it('refuses foreign, deleted and duplicate properties, negative or inexact prices and foreign crews: 400, nothing written', async () => {
    const mine = await property(owner, cus, null);
    const foreign = await property(other, await customer(other), null);
    const gone = await property(owner, cus, null, '9 Gone St');
    expect((await owner.call('DELETE', `/api/properties/${gone}`)).statusCode).toBe(204);
    const orphanCustomer = await customer(owner, 'Leaving');
    const orphan = await property(owner, orphanCustomer, null, '8 Left St');
    expect((await owner.call('DELETE', `/api/customers/${orphanCustomer}`)).statusCode).toBe(204);

    const routesBefore = await countRows(h, winterRoutes, owner.organizationId);
    const stopsBefore = await countRows(h, winterRouteStops, owner.organizationId);
    const cases: Array<[unknown[], string]> = [
      [[stop(mine), stop(foreign)], 'stops[1].propertyId'],
      [[stop(gone)], 'stops[0].propertyId'],
      [[stop(orphan)], 'stops[0].propertyId'],
      [[stop(mine), stop(mine)], 'stops[1].propertyId'],
      [[stop(mine, { billing: { mode: 'per_push', price: -1 } })], 'stops/0/billing/price'],
      [[stop(mine, { billing: { mode: 'per_push', price: 1.005 } })], 'stops[0].billing.price'],
      [[stop(mine, { triggerInches: -2 })], 'stops/0/triggerInches'],
      [[stop(mine, { services: [] })], 'stops/0/services'],
    ];
    for (const [stops, field] of cases) {
      const res = await owner.call('POST', '/api/winter-routes', { name: 'Bad', stops });
      expect(res.statusCode, JSON.stringify(stops)).toBe(400);
      expect(details(res).code).toBe('VALIDATION_FAILED');
      expect(JSON.stringify(details(res).details)).toContain(field.split(/[[/.]/)[0]);
    }
    const crew = await owner.call('POST', '/api/winter-routes', { name: 'Bad', crewId: 'crw_nope' });
    expect(crew.statusCode).toBe(400);
    expect(await countRows(h, winterRoutes, owner.organizationId)).toBe(routesBefore);
    expect(await countRows(h, winterRouteStops, owner.organizationId)).toBe(stopsBefore);

    // A failing replacement leaves the stops as they were.
    const r = await route(owner, { stops: [stop(mine)] });
    const bad = await owner.call('PUT', `/api/winter-routes/${r.id}/stops`, { stops: [stop(foreign)] });
    expect(bad.statusCode).toBe(400);
    expect(details(bad).details?.[0]?.field).toBe('stops[0].propertyId');
    const after = await owner.call('GET', `/api/winter-routes/${r.id}`);
    expect(after.json().data.stops.map((s: { propertyId: string }) => s.propertyId)).toEqual([mine]);
    // Another organization's route: 404.
    expect((await other.call('PUT', `/api/winter-routes/${r.id}/stops`, { stops: [] })).statusCode).toBe(404);
  });

  it('a deleted property leaves its routes', async () => {
    const a = await property(owner, cus, null);
    const b = await property(owner, cus, null, '2 Pine St');
    const r = await route(owner, { stops: [stop(a), stop(b)] });
    expect((await owner.call('DELETE', `/api/properties/${a}`)).statusCode).toBe(204);
    const after = await owner.call('GET', `/api/winter-routes/${r.id}`);
    expect(after.json().data.stops.map((s: { propertyId: string }) => s.propertyId)).toEqual([b]);
  });
});

describe('optimize', () => {
  it('shortens the drive from the depot, numbers the stops from 1, keeps stops without coordinates last, is stable', async () => {
    const depot = { lat: 44.4, lng: -73.2 };
    // Along a meridian north of the depot, given in a zig-zag order; one stop without coordinates in the middle.
    const near = await property(owner, cus, { lat: 44.41, lng: -73.2 }, '10 North Rd');
    const mid = await property(owner, cus, { lat: 44.42, lng: -73.2 }, '20 North Rd');
    const far = await property(owner, cus, { lat: 44.43, lng: -73.2 }, '30 North Rd');
    const unknown = await property(owner, cus, null, 'No GPS Ln');
    const r = await route(owner, { depot, stops: [stop(far), stop(unknown), stop(near), stop(mid)] });
    const res = await owner.call('POST', `/api/winter-routes/${r.id}/optimize`);
    expect(res.statusCode).toBe(200);
    const data = res.json().data as {
      distanceBeforeKm: number;
      distanceAfterKm: number;
      stops: Array<{ propertyId: string; sequence: number }>;
    };
    // before: depot→far 3.34 + far→near 2.22 + near→mid 1.11 = 6.67; after: 3.34 (0.01° of latitude ≈ 1.112 km).
    expect(data.distanceBeforeKm).toBeCloseTo(6.67, 1);
    expect(data.distanceAfterKm).toBeCloseTo(3.34, 1);
    expect(Number.isInteger(data.distanceAfterKm * 100)).toBe(true);
    expect(data.stops.map((s) => [s.propertyId, s.sequence])).toEqual([
      [near, 1],
      [mid, 2],
      [far, 3],
      [unknown, 4],
    ]);
    const stored = await owner.call('GET', `/api/winter-routes/${r.id}`);
    expect(stored.json().data.stops.map((s: { propertyId: string }) => s.propertyId)).toEqual([
      near,
      mid,
      far,
      unknown,
    ]);
    const again = (await owner.call('POST', `/api/winter-routes/${r.id}/optimize`, {})).json().data;
    expect(again.distanceBeforeKm).toBe(data.distanceAfterKm);
    expect(again.distanceAfterKm).toBe(data.distanceAfterKm);
    expect(again.stops).toEqual(data.stops);
  });

  it('a route without stops or depot optimizes to zero', async () => {
    const r = await route(owner, {});
    const res = await owner.call('POST', `/api/winter-routes/${r.id}/optimize`);
    expect(res.json().data).toEqual({ distanceBeforeKm: 0, distanceAfterKm: 0, stops: [] });
  });
});
