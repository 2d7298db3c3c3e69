import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import type { RunT } from './helpers.js';

/*
 * Issue 14 "Done when", as a new user would try it, through the API only: a route of ten
 * properties with coordinates, optimize (the distance drops), a 4-inch storm, dispatch,
 * visits serviced with pushes and salt, bill the storm, open the invoices, read the report.
 */

let h: Harness;
let owner: TestUser;

beforeAll(async () => {
  h = await createHarness();
  owner = await newTenant(h);
});
afterAll(async () => h?.close());

async function ok(method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, body?: unknown, status = 200) {
  const res = await owner.call(method, url, body);
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(status);
  return res.json().data;
}

it('builds, optimizes, dispatches, services, bills and reports a storm', async () => {
  await ok('PATCH', '/api/settings', { taxRate: 5 });
  // Two customers, ten properties on a 2 × 5 block grid north of the yard, listed in a scrambled order.
  const customers = [
    (await ok('POST', '/api/customers', { firstName: 'Ann', lastName: 'Plaza' }, 201)).id as string,
    (await ok('POST', '/api/customers', { firstName: 'Ben', lastName: 'Mall' }, 201)).id as string,
  ];
  const order = [7, 2, 9, 0, 5, 3, 8, 1, 6, 4];
  const propertyIds: string[] = [];
  for (const i of order) {
    const created = await ok(
      'POST',
      '/api/properties',
      {
        customerId: customers[i % 2],
        street: `${100 + i} Main St`,
        city: 'Burlington',
        state: 'VT',
        lat: 44.47 + Math.floor(i / 2) * 0.005,
        lng: -73.21 + (i % 2) * 0.005,
      },
      201,
    );
    propertyIds.push(created.id);
  }
  const route = await ok(
    'POST',
    '/api/winter-routes',
    {
      name: 'Downtown',
      depot: { lat: 44.465, lng: -73.21 },
      stops: propertyIds.map((propertyId, k) => ({
        propertyId,
        services: k % 3 === 0 ? ['plow', 'salt'] : ['plow'],
        triggerInches: 2,
        billing: k % 4 === 0 ? { mode: 'per_event', price: 75 } : { mode: 'per_push', price: 40 },
      })),
    },
    201,
  );
  expect(route.stops).toHaveLength(10);

  const optimized = await ok('POST', `/api/winter-routes/${route.id}/optimize`);
  expect(optimized.distanceAfterKm).toBeLessThan(optimized.distanceBeforeKm);
  expect(optimized.stops.map((s: { sequence: number }) => s.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);

  const storm = await ok(
    'POST',
    '/api/winter-routes/storms',
    { name: 'Nor’easter', startedAt: '2026-01-10T02:00:00Z', snowfallInches: 4, ice: false },
    201,
  );
  const { runs } = (await ok('POST', `/api/winter-routes/storms/${storm.id}/dispatch`, {}, 201)) as { runs: RunT[] };
  expect(runs).toHaveLength(1);
  const run = runs[0] as RunT;
  expect(run.visits.map((v) => v.propertyId)).toEqual(optimized.stops.map((s: { propertyId: string }) => s.propertyId));

  // The crew services every stop, in route order, 2 pushes each and 25 lb of salt where it salts.
  let minutes = 0;
  let last: RunT = run;
  for (const visit of run.visits) {
    minutes += 10;
    last = await ok('POST', `/api/winter-routes/runs/${run.id}/visits/${visit.id}`, {
      status: 'serviced',
      pushes: 2,
      saltLbs: 25,
      servicedAt: new Date(Date.parse('2026-01-10T05:00:00Z') + minutes * 60_000).toISOString(),
    });
  }
  expect(last.status).toBe('completed');

  const billed = await ok('POST', `/api/winter-routes/storms/${storm.id}/invoice`);
  const invoices = billed.invoices as Array<{ id: string; customerId: string; total: number; subtotal: number }>;
  expect(invoices.map((i) => i.customerId).sort()).toEqual([...customers].sort());
  let subtotal = 0;
  for (const inv of invoices) {
    const opened = await ok('GET', `/api/invoices/${inv.id}`);
    expect(opened.status).toBe('draft');
    expect(opened.lineItems.length).toBeGreaterThan(0);
    expect(opened.taxRate).toBe(5);
    for (const line of opened.lineItems) expect(line.description).toContain('Nor’easter');
    subtotal += opened.subtotal;
  }
  // Stops 0, 4, 8 (as created) are per event (75), the seven others 2 pushes × 40.
  expect(subtotal).toBe(3 * 75 + 7 * 80);

  const report = await ok('GET', `/api/winter-routes/storms/${storm.id}/report`);
  expect(report).toEqual({
    stormId: storm.id,
    routes: [
      {
        routeId: route.id,
        serviced: 10,
        skipped: 0,
        pending: 0,
        pushes: 20,
        saltLbs: 250,
        firstServicedAt: '2026-01-10T05:10:00.000Z',
        lastServicedAt: '2026-01-10T06:40:00.000Z',
        billed: subtotal,
      },
    ],
  });
  // Nothing left to bill.
  expect((await ok('POST', `/api/winter-routes/storms/${storm.id}/invoice`)).invoices).toEqual([]);
});
