import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invoiceLineItems, invoices, storms, winterRuns, winterVisits } from '../../src/db/schema/index.js';
import { countRows, eventsDuring, setSettings } from '../factories.js';
import { addMember, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { customer, property, type RunT, route, stop, storm } from './helpers.js';

let h: Harness;
let owner: TestUser;
let member: TestUser;
let other: TestUser;

beforeAll(async () => {
  h = await createHarness();
  owner = await newTenant(h);
  member = await addMember(h, owner, 'member');
  other = await newTenant(h, { name: 'Other' });
  await setSettings(h, owner.organizationId, { taxRate: 8.25 });
});
afterAll(async () => h?.close());

const dispatchOf = (s: { id: string }, body: unknown = {}) =>
  owner.call('POST', `/api/winter-routes/storms/${s.id}/dispatch`, body);
const record = (run: { id: string }, visitId: string, body: Record<string, unknown>, by: TestUser = owner) =>
  by.call('POST', `/api/winter-routes/runs/${run.id}/visits/${visitId}`, body);
const bill = (s: { id: string }) => owner.call('POST', `/api/winter-routes/storms/${s.id}/invoice`);

describe('storms', () => {
  it('records, reads, lists and corrects a storm; negative snowfall and an end before the start → 400', async () => {
    const s = await storm(owner, { ice: true });
    const got = (await owner.call('GET', `/api/winter-routes/storms/${s.id}`)).json().data;
    expect(got).toMatchObject({ name: 'Jan 5', snowfallInches: 4, ice: true, endedAt: null });
    const list = await member.call('GET', '/api/winter-routes/storms');
    expect(list.json().data.map((x: { id: string }) => x.id)).toContain(s.id);
    const ended = await owner.call('PATCH', `/api/winter-routes/storms/${s.id}`, { endedAt: '2026-01-05T20:00:00Z' });
    expect(ended.json().data.endedAt).toBe('2026-01-05T20:00:00.000Z');
    const before = await countRows(h, storms, owner.organizationId);
    const negative = await owner.call('POST', '/api/winter-routes/storms', {
      name: 'Bad',
      startedAt: '2026-01-05T03:00:00Z',
      snowfallInches: -1,
    });
    expect(negative.statusCode).toBe(400);
    const backwards = await owner.call('POST', '/api/winter-routes/storms', {
      name: 'Bad',
      startedAt: '2026-01-05T03:00:00Z',
      endedAt: '2026-01-04T03:00:00Z',
      snowfallInches: 1,
    });
    expect(backwards.statusCode).toBe(400);
    expect(backwards.json().error.details[0].field).toBe('endedAt');
    expect(await countRows(h, storms, owner.organizationId)).toBe(before);
  });
});

describe('dispatch, visits, billing and report', () => {
  let cusA: string;
  let cusB: string;
  let shallow: string;
  let deep: string;
  let salted: string;
  let eventStop: string;
  let seasonal: string;
  let otherCustomerStop: string;
  let main: { id: string };
  let idle: { id: string };
  let inactive: { id: string };

  beforeAll(async () => {
    cusA = await customer(owner, 'Alice');
    cusB = await customer(owner, 'Bob');
    shallow = await property(owner, cusA, { lat: 44.41, lng: -73.2 }, '1 Shallow St');
    deep = await property(owner, cusA, { lat: 44.42, lng: -73.2 }, '2 Deep St');
    salted = await property(owner, cusA, { lat: 44.43, lng: -73.2 }, '3 Salt St');
    eventStop = await property(owner, cusA, { lat: 44.44, lng: -73.2 }, '4 Event St');
    seasonal = await property(owner, cusB, { lat: 44.45, lng: -73.2 }, '5 Season St');
    otherCustomerStop = await property(owner, cusB, { lat: 44.46, lng: -73.2 }, '6 Bob St');
    main = await route(owner, {
      name: 'A main',
      stops: [
        stop(shallow, { triggerInches: 2, billing: { mode: 'per_push', price: 45 } }),
        stop(deep, { triggerInches: 6 }),
        stop(salted, { triggerInches: 8, services: ['salt'], billing: { mode: 'per_event', price: 30 } }),
        stop(eventStop, { billing: { mode: 'per_event', price: 60 } }),
        stop(seasonal, { billing: { mode: 'seasonal', price: 900 } }),
        stop(otherCustomerStop, { billing: { mode: 'per_push', price: 50.5 } }),
      ],
    });
    idle = await route(owner, { name: 'B idle', stops: [stop(deep, { triggerInches: 10 })] });
    inactive = await route(owner, { name: 'C inactive', active: false, stops: [stop(shallow)] });
  });

  it('dispatches by trigger depth and ice, one run per route, visits snapshot the billing', async () => {
    const s = await storm(owner, { name: 'Ice storm', snowfallInches: 4, ice: true });
    const res = await dispatchOf(s);
    expect(res.statusCode).toBe(201);
    const runs = res.json().data.runs as RunT[];
    // The idle route has no triggered stop, the inactive one is skipped: no empty runs.
    expect(runs.map((r) => r.routeId)).toEqual([main.id]);
    const run = runs[0] as RunT;
    expect(run.status).toBe('dispatched');
    expect(run.visits.map((v) => [v.propertyId, v.sequence, v.status])).toEqual([
      [shallow, 1, 'pending'],
      [salted, 2, 'pending'],
      [eventStop, 3, 'pending'],
      [seasonal, 4, 'pending'],
      [otherCustomerStop, 5, 'pending'],
    ]);
    expect(run.visits[0]).toMatchObject({ customerId: cusA, billing: { mode: 'per_push', price: 45 }, billed: false });
    // Changing the stop later does not change the visit.
    await owner.call('PUT', `/api/winter-routes/${main.id}/stops`, {
      stops: [stop(shallow, { billing: { mode: 'per_push', price: 99 } })],
    });
    const got = (await member.call('GET', `/api/winter-routes/runs/${run.id}`)).json().data as RunT;
    expect(got.visits[0]?.billing).toEqual({ mode: 'per_push', price: 45 });
    expect(got.visits).toHaveLength(5);
  });

  it('refuses a second dispatch of a route (409 CONFLICT), inactive or untriggered routes (409 INVALID_STATE), unknown ids (400)', async () => {
    const r = await route(owner, { name: 'D refusals', stops: [stop(shallow)] });
    const s = await storm(owner, { name: 'Refusals', snowfallInches: 3 });
    expect((await dispatchOf(s, { routeIds: [r.id] })).statusCode).toBe(201);
    const runsBefore = await countRows(h, winterRuns, owner.organizationId);
    const again = await dispatchOf(s, { routeIds: [r.id] });
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('CONFLICT');
    const off = await dispatchOf(s, { routeIds: [inactive.id] });
    expect(off.json().error.code).toBe('INVALID_STATE');
    const none = await dispatchOf(s, { routeIds: [idle.id] });
    expect(none.statusCode).toBe(409);
    expect(none.json().error.code).toBe('INVALID_STATE');
    // One bad route in the list: nothing dispatched at all.
    const mixed = await dispatchOf(s, { routeIds: [main.id, inactive.id] });
    expect(mixed.statusCode).toBe(409);
    const unknown = await dispatchOf(s, { routeIds: ['wrt_nope'] });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.details[0].field).toBe('routeIds[0]');
    const foreign = await other.call('POST', `/api/winter-routes/storms/${s.id}/dispatch`, {});
    expect(foreign.statusCode).toBe(404);
    expect(await countRows(h, winterRuns, owner.organizationId)).toBe(runsBefore);
    // Without routeIds a dispatched route is skipped, not refused.
    const rest = await dispatchOf(s);
    expect(rest.statusCode).toBe(201);
    expect((rest.json().data.runs as RunT[]).map((x) => x.routeId)).not.toContain(r.id);
    expect((await dispatchOf(s)).json().data.runs).toEqual([]);
  });

  it('concurrent dispatches of one storm make one run per route', async () => {
    const r = await route(owner, { name: 'E race', stops: [stop(shallow)] });
    const s = await storm(owner, { name: 'Race', snowfallInches: 3 });
    const results = await Promise.all([1, 2, 3].map(() => dispatchOf(s, { routeIds: [r.id] })));
    expect(results.map((x) => x.statusCode).sort()).toEqual([201, 409, 409]);
    const rows = await h.admin.db.select().from(winterRuns).where(eq(winterRuns.stormId, s.id));
    expect(rows).toHaveLength(1);
  });

  it('records visits in any order; the run follows; pushes 0 → 400; a visit of another run → 404', async () => {
    const r = await route(owner, { name: 'F visits', stops: [stop(shallow), stop(deep, { triggerInches: 1 })] });
    const r2 = await route(owner, { name: 'G visits', stops: [stop(eventStop)] });
    const s = await storm(owner, { name: 'Visits', snowfallInches: 3 });
    const runs = (await dispatchOf(s, { routeIds: [r.id, r2.id] })).json().data.runs as RunT[];
    const run = runs.find((x) => x.routeId === r.id) as RunT;
    const otherRun = runs.find((x) => x.routeId === r2.id) as RunT;
    const [first, second] = run.visits as [RunT['visits'][0], RunT['visits'][0]];

    const zero = await record(run, second.id, { status: 'serviced', pushes: 0 });
    expect(zero.statusCode).toBe(400);
    const wrongRun = await record(otherRun, second.id, { status: 'serviced' });
    expect(wrongRun.statusCode).toBe(404);
    expect((await record(run, 'wvs_nope', { status: 'serviced' })).statusCode).toBe(404);
    const untouched = (await owner.call('GET', `/api/winter-routes/runs/${run.id}`)).json().data as RunT;
    expect(untouched.status).toBe('dispatched');
    expect(untouched.visits.every((v) => v.status === 'pending')).toBe(true);

    const step1 = await record(
      run,
      second.id,
      {
        status: 'serviced',
        pushes: 2,
        saltLbs: 50,
        servicedAt: '2026-01-05T06:00:00Z',
        notes: 'drifts',
      },
      member,
    );
    expect(step1.statusCode).toBe(200);
    expect(step1.json().data.status).toBe('in_progress');
    expect(step1.json().data.visits[1]).toMatchObject({
      status: 'serviced',
      pushes: 2,
      saltLbs: 50,
      notes: 'drifts',
      servicedAt: '2026-01-05T06:00:00.000Z',
    });
    const step2 = await record(run, first.id, { status: 'skipped', notes: 'blocked by car' });
    expect(step2.json().data.status).toBe('completed');
    expect(step2.json().data.visits[0]).toMatchObject({ status: 'skipped', pushes: null, servicedAt: null });
    // Recording again overwrites while unbilled; the run stays completed.
    const step3 = await record(run, first.id, { status: 'serviced', servicedAt: '2026-01-05T07:00:00Z' });
    expect(step3.json().data.status).toBe('completed');
    expect(step3.json().data.visits[0]).toMatchObject({ status: 'serviced', pushes: 1 });

    const listed = await owner.call('GET', '/api/winter-routes/runs', undefined, { query: { stormId: s.id } });
    expect(
      listed
        .json()
        .data.map((x: RunT) => x.id)
        .sort(),
    ).toEqual([run.id, otherRun.id].sort());
    const byRoute = await owner.call('GET', '/api/winter-routes/runs', undefined, { query: { routeId: r2.id } });
    expect(byRoute.json().data.map((x: RunT) => x.id)).toEqual([otherRun.id]);
  });

  it('bills serviced visits through the invoice service, one draft per customer, once; then reports', async () => {
    const s = await storm(owner, { name: 'Billing', snowfallInches: 3 });
    // Nothing serviced yet: 200 with no invoices.
    const runs = (await dispatchOf(s, { routeIds: [main.id] })).json().data.runs as RunT[];
    const nothing = await bill(s);
    expect(nothing.statusCode).toBe(200);
    expect(nothing.json().data).toEqual({ invoices: [] });

    // main now has one stop (shallow, per_push 99 after the PUT above); add the others back.
    await owner.call('PUT', `/api/winter-routes/${main.id}/stops`, {
      stops: [
        stop(shallow, { billing: { mode: 'per_push', price: 45 } }),
        stop(eventStop, { billing: { mode: 'per_event', price: 60 } }),
        stop(seasonal, { billing: { mode: 'seasonal', price: 900 } }),
        stop(otherCustomerStop, { billing: { mode: 'per_push', price: 50.5 } }),
      ],
    });
    const s2 = await storm(owner, { name: 'Billing 2', snowfallInches: 3 });
    const run = ((await dispatchOf(s2, { routeIds: [main.id] })).json().data.runs as RunT[])[0] as RunT;
    const visitAt = (p: string) => run.visits.find((v) => v.propertyId === p) as RunT['visits'][0];
    await record(run, visitAt(shallow).id, {
      status: 'serviced',
      pushes: 3,
      saltLbs: 20,
      servicedAt: '2026-01-06T05:00:00Z',
    });
    await record(run, visitAt(eventStop).id, { status: 'serviced', pushes: 2, servicedAt: '2026-01-06T06:00:00Z' });
    await record(run, visitAt(seasonal).id, { status: 'serviced', pushes: 1, servicedAt: '2026-01-06T07:00:00Z' });

    let result = nothing;
    const events = await eventsDuring(h, owner.organizationId, async () => {
      result = await bill(s2);
    });
    expect(result.statusCode).toBe(200);
    const invoicesA = result.json().data.invoices as Array<{
      id: string;
      customerId: string;
      status: string;
      invoiceNumber: string;
      lineItems: Array<{ description: string; quantity: number; unitPrice: number; amount: number }>;
      subtotal: number;
      tax: number;
      total: number;
      propertyId: string | null;
    }>;
    // Only Alice has billable visits (Bob's seasonal stop is excluded, his other stop is pending).
    expect(invoicesA).toHaveLength(1);
    const inv = invoicesA[0] as (typeof invoicesA)[0];
    expect(inv).toMatchObject({ customerId: cusA, status: 'draft', subtotal: 195, tax: 16.09, total: 211.09 });
    expect(inv.invoiceNumber).toMatch(/^INV-\d{6}$/);
    expect(inv.lineItems.map((l) => [l.quantity, l.unitPrice, l.amount])).toEqual([
      [3, 45, 135],
      [1, 60, 60],
    ]);
    expect(inv.lineItems[0]?.description).toContain('1 Shallow St');
    expect(inv.lineItems[0]?.description).toContain('Billing 2');
    expect(events.filter((e) => e.type === 'invoice.created')).toHaveLength(1);
    const opened = await owner.call('GET', `/api/invoices/${inv.id}`);
    expect(opened.statusCode).toBe(200);
    expect(opened.json().data.total).toBe(211.09);

    // A billed visit cannot be recorded again.
    const locked = await record(run, visitAt(shallow).id, { status: 'serviced', pushes: 9 });
    expect(locked.statusCode).toBe(409);
    expect(locked.json().error.code).toBe('INVALID_STATE');

    // Nothing new: no invoice. Then Bob's visit is serviced: a new draft for Bob only.
    expect((await bill(s2)).json().data).toEqual({ invoices: [] });
    await record(run, visitAt(otherCustomerStop).id, {
      status: 'serviced',
      pushes: 2,
      servicedAt: '2026-01-06T08:00:00Z',
    });
    const second = (await bill(s2)).json().data.invoices as typeof invoicesA;
    expect(second.map((i) => [i.customerId, i.subtotal, i.propertyId])).toEqual([[cusB, 101, otherCustomerStop]]);

    const report = await member.call('GET', `/api/winter-routes/storms/${s2.id}/report`);
    expect(report.statusCode).toBe(200);
    expect(report.json().data).toEqual({
      stormId: s2.id,
      routes: [
        {
          routeId: main.id,
          serviced: 4,
          skipped: 0,
          pending: 0,
          pushes: 8,
          saltLbs: 20,
          firstServicedAt: '2026-01-06T05:00:00.000Z',
          lastServicedAt: '2026-01-06T08:00:00.000Z',
          billed: 296,
        },
      ],
    });
    const firstReport = (await owner.call('GET', `/api/winter-routes/storms/${s.id}/report`)).json().data;
    expect(firstReport.routes[0]).toMatchObject({ routeId: runs[0]?.routeId, pending: 1, serviced: 0, billed: 0 });
    // A dispatched route keeps its history.
    expect((await owner.call('DELETE', `/api/winter-routes/${main.id}`)).statusCode).toBe(409);
  });

  it('concurrent billing calls never bill a visit twice', async () => {
    const r = await route(owner, {
      name: 'H race',
      stops: [stop(shallow), stop(otherCustomerStop, { billing: { mode: 'per_event', price: 10 } })],
    });
    const s = await storm(owner, { name: 'Bill race', snowfallInches: 3 });
    const run = ((await dispatchOf(s, { routeIds: [r.id] })).json().data.runs as RunT[])[0] as RunT;
    for (const v of run.visits) await record(run, v.id, { status: 'serviced', pushes: 2 });
    const results = await Promise.all([1, 2, 3, 4].map(() => bill(s)));
    expect(results.map((x) => x.statusCode)).toEqual([200, 200, 200, 200]);
    const made = results.flatMap((x) => x.json().data.invoices as Array<{ id: string }>);
    expect(made).toHaveLength(2);
    const visits = await h.admin.db.select().from(winterVisits).where(eq(winterVisits.runId, run.id));
    expect(visits.every((v) => v.invoiceId !== null)).toBe(true);
    const lines = await h.admin.db
      .select()
      .from(invoiceLineItems)
      .innerJoin(invoices, eq(invoices.id, invoiceLineItems.invoiceId))
      .where(
        and(eq(invoices.organizationId, owner.organizationId), eq(invoices.notes, 'Snow services, storm Bill race')),
      );
    expect(lines).toHaveLength(2);
  });

  it('deleting a draft storm invoice lets its visits be billed again', async () => {
    const r = await route(owner, { name: 'I redo', stops: [stop(shallow)] });
    const s = await storm(owner, { name: 'Redo', snowfallInches: 3 });
    const run = ((await dispatchOf(s, { routeIds: [r.id] })).json().data.runs as RunT[])[0] as RunT;
    await record(run, (run.visits[0] as RunT['visits'][0]).id, { status: 'serviced' });
    const [inv] = (await bill(s)).json().data.invoices as Array<{ id: string }>;
    expect((await owner.call('DELETE', `/api/invoices/${inv?.id}`)).statusCode).toBe(204);
    const again = (await bill(s)).json().data.invoices as Array<{ id: string; total: number }>;
    expect(again).toHaveLength(1);
    expect(again[0]?.id).not.toBe(inv?.id);
  });

  it("leaves a deleted customer's visits unbilled", async () => {
    const leaving = await customer(owner, 'Leaving');
    const gone = await property(owner, leaving, null, '7 Gone Rd');
    const r = await route(owner, { name: 'J gone', stops: [stop(gone), stop(shallow)] });
    const s = await storm(owner, { name: 'Gone', snowfallInches: 3 });
    const run = ((await dispatchOf(s, { routeIds: [r.id] })).json().data.runs as RunT[])[0] as RunT;
    for (const v of run.visits) await record(run, v.id, { status: 'serviced' });
    expect((await owner.call('DELETE', `/api/customers/${leaving}`)).statusCode).toBe(204);
    const made = (await bill(s)).json().data.invoices as Array<{ customerId: string }>;
    expect(made.map((i) => i.customerId)).toEqual([cusA]);
    const after = (await owner.call('GET', `/api/winter-routes/runs/${run.id}`)).json().data as RunT;
    expect(after.visits.map((v) => [v.propertyId, v.billed])).toEqual([
      [gone, false],
      [shallow, true],
    ]);
  });
});
