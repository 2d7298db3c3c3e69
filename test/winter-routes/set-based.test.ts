import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { optimize } from '../../src/modules/winter-routes/winter-routes.service.js';
import { AppError } from '../../src/platform/errors.js';
import { inTenant } from '../../src/platform/tenancy.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { customer, property, type RunT, route, stop, storm } from './helpers.js';

/*
 * Winter routes write many rows with set-based statements, one per kind of row, however
 * many rows (no statement per visit, stop or route); and optimize computes with no lock
 * held, then writes only if the route did not change meanwhile. Statements are counted
 * by statement-level triggers the test installs.
 */

let h: Harness;
let owner: TestUser;

beforeAll(async () => {
  h = await createHarness();
  owner = await newTenant(h);
  await h.admin.db.execute(sql`CREATE TABLE test_statements (tbl text NOT NULL, op text NOT NULL)`);
  await h.admin.db.execute(sql`CREATE FUNCTION test_count_statement() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER AS $$
    BEGIN INSERT INTO test_statements VALUES (TG_TABLE_NAME, TG_OP); RETURN NULL; END $$`);
  for (const table of ['winter_runs', 'winter_visits', 'winter_route_stops']) {
    await h.admin.db.execute(
      sql.raw(`CREATE TRIGGER ${table}_count AFTER INSERT OR UPDATE ON ${table}
        FOR EACH STATEMENT EXECUTE FUNCTION test_count_statement()`),
    );
  }
});
afterAll(async () => h?.close());
beforeEach(async () => {
  await h.admin.db.execute(sql`DELETE FROM test_statements`);
});

/** Statements run since the test began, as `table op` → count. */
async function statements() {
  const result = await h.admin.db.execute(sql`SELECT tbl, op, count(*)::int AS n FROM test_statements GROUP BY 1, 2`);
  const rows = (result as unknown as { rows: Array<{ tbl: string; op: string; n: number }> }).rows;
  return Object.fromEntries(rows.map((r) => [`${r.tbl} ${r.op}`, r.n]));
}

/** A route of `n` stops on a line, given in the worst order (alternating ends). */
async function lineRoute(name: string, n: number) {
  const cus = await customer(owner, name);
  const props: string[] = [];
  for (let i = 0; i < n; i++) props.push(await property(owner, cus, { lat: 0, lng: i * 0.01 }, `${i + 1} ${name} St`));
  const order = props.map((_, i) => (i % 2 === 0 ? props[i / 2] : props[n - 1 - (i - 1) / 2])) as string[];
  return route(owner, { name, depot: { lat: 0, lng: -0.01 }, stops: order.map((p) => stop(p)) });
}

const tenant = <T>(fn: Parameters<typeof inTenant<T>>[3]) =>
  inTenant(h.database.db, owner.organizationId, { kind: 'user', id: owner.userId, role: 'owner' }, fn);

describe('set-based writes', () => {
  it('dispatch inserts every run in one statement and every visit in one', async () => {
    await lineRoute('Dispatch A', 3);
    await lineRoute('Dispatch B', 4);
    await lineRoute('Dispatch C', 2);
    await h.admin.db.execute(sql`DELETE FROM test_statements`);
    const s = await storm(owner, { name: 'Set-based dispatch' });
    const res = await owner.call('POST', `/api/winter-routes/storms/${s.id}/dispatch`, {});
    expect(res.statusCode, res.body).toBe(201);
    const runs = res.json().data.runs as RunT[];
    expect(runs.map((r) => r.visits.length).sort()).toEqual([2, 3, 4]);
    for (const run of runs) expect(run.visits.map((v) => v.sequence)).toEqual(run.visits.map((_, i) => i + 1));
    expect(await statements()).toMatchObject({ 'winter_runs INSERT': 1, 'winter_visits INSERT': 1 });

    // Billing marks every visit it billed in one statement.
    for (const run of runs) {
      for (const v of run.visits) {
        const rec = await owner.call('POST', `/api/winter-routes/runs/${run.id}/visits/${v.id}`, {
          status: 'serviced',
          pushes: 2,
        });
        expect(rec.statusCode, rec.body).toBe(200);
      }
    }
    await h.admin.db.execute(sql`DELETE FROM test_statements`);
    const billed = await owner.call('POST', `/api/winter-routes/storms/${s.id}/invoice`);
    expect(billed.statusCode, billed.body).toBe(200);
    expect(billed.json().data.invoices).toHaveLength(3);
    expect((await statements())['winter_visits UPDATE']).toBe(1);
    const report = (await owner.call('GET', `/api/winter-routes/storms/${s.id}/report`)).json().data;
    const total = report.routes.reduce((sum: number, r: { billed: number }) => sum + r.billed, 0);
    expect(total).toBe(9 * 2 * 45);
  });

  it('optimize writes every moved stop in one statement', async () => {
    const r = await lineRoute('Optimize', 8);
    await h.admin.db.execute(sql`DELETE FROM test_statements`);
    const res = await owner.call('POST', `/api/winter-routes/${r.id}/optimize`);
    expect(res.statusCode, res.body).toBe(200);
    const got = res.json().data;
    expect(got.distanceAfterKm).toBeLessThan(got.distanceBeforeKm);
    expect((await statements())['winter_route_stops UPDATE']).toBe(1);
    const stops = (await owner.call('GET', `/api/winter-routes/${r.id}`)).json().data.stops;
    expect(stops.map((s: { id: string }) => s.id)).toEqual(got.stops.map((s: { id: string }) => s.id));
  });

  it('optimize computes with no lock held, and answers 409 when the stops changed meanwhile', async () => {
    const r = await lineRoute('Contended', 5);
    const before = (await owner.call('GET', `/api/winter-routes/${r.id}`)).json().data.stops;
    let err: unknown;
    await optimize(tenant, r.id, {
      // The route is not locked while the order is computed: another change goes through.
      beforeWrite: async () => {
        const put = await owner.call('PUT', `/api/winter-routes/${r.id}/stops`, {
          stops: before.slice(1).map((s: { propertyId: string }) => stop(s.propertyId)),
        });
        expect(put.statusCode, put.body).toBe(200);
      },
    }).catch((e) => {
      err = e;
    });
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('CONFLICT');
    // The change made meanwhile stands, untouched by the stale order.
    const after = (await owner.call('GET', `/api/winter-routes/${r.id}`)).json().data.stops;
    expect(after.map((s: { propertyId: string }) => s.propertyId)).toEqual(
      before.slice(1).map((s: { propertyId: string }) => s.propertyId),
    );
    // Unchanged since it was read: optimize writes.
    const ok = await optimize(tenant, r.id);
    expect(ok.stops).toHaveLength(4);
  });
});
