import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf, type Tx } from '../../src/db/client.js';
import { APP_ROLE, RLS_NOT_FORCED_TABLES } from '../../src/db/migrate.js';
import { events } from '../../src/db/schema/index.js';
import { AppError } from '../../src/platform/errors.js';
import { emit } from '../../src/platform/events/outbox.js';
import { type Actor, inTenant, withTenant } from '../../src/platform/tenancy.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/**
 * Row-level security is the second wall between tenants (the first: every query names
 * its organization). These tests talk to the database directly, as the application role.
 */
describe('tenant isolation (row-level security)', () => {
  let h: Harness;
  let a: TestUser;
  let b: TestUser;
  beforeAll(async () => {
    h = await createHarness();
    a = await newTenant(h, { name: 'A' });
    b = await newTenant(h, { name: 'B' });
  });
  afterAll(async () => h?.close());

  /** One transaction as the app role, optionally with a tenant set. */
  const asApp = <T>(orgId: string | null, fn: (tx: Tx) => Promise<T>) =>
    h.database.db.transaction(async (tx) => {
      await tx.execute(sql`SELECT set_config('role', ${APP_ROLE}, true)`);
      if (orgId) await tx.execute(sql`SELECT set_config('app.organization_id', ${orgId}, true)`);
      return fn(tx);
    });
  const count = async (tx: Tx, table: string, where = sql``) =>
    rowsOf<{ n: number }>(await tx.execute(sql`SELECT count(*)::int AS n FROM ${sql.identifier(table)} ${where}`))[0]
      ?.n;

  it('really runs as a role without BYPASSRLS and not as superuser', async () => {
    const [row] = await asApp(null, async (tx) =>
      rowsOf<{ who: string; su: string; bypass: boolean }>(
        await tx.execute(
          sql`SELECT current_user AS who, current_setting('is_superuser') AS su, (SELECT rolbypassrls FROM pg_roles WHERE rolname = current_user) AS bypass`,
        ),
      ),
    );
    expect(row).toEqual({ who: APP_ROLE, su: 'off', bypass: false });
  });

  it('without app.organization_id: sees zero rows and cannot insert', async () => {
    // The owner (superuser) sees both tenants, so zero below is RLS, not an empty table.
    const all = rowsOf<{ n: number }>(await h.admin.db.execute(sql`SELECT count(*)::int AS n FROM members`))[0]?.n;
    expect(all).toBeGreaterThanOrEqual(2);
    const seen = await asApp(null, async (tx) => ({
      members: await count(tx, 'members'),
      organizations: await count(tx, 'organizations'),
      customers: await count(tx, 'customers'),
    }));
    expect(seen).toEqual({ members: 0, organizations: 0, customers: 0 });
    await expect(
      asApp(null, (tx) =>
        tx.execute(
          sql`INSERT INTO events (id, organization_id, type, data) VALUES ('evt_rls_none', ${a.organizationId}, 'customer.created', '{}')`,
        ),
      ),
    ).rejects.toThrow();
    const written = rowsOf<{ n: number }>(
      await h.admin.db.execute(sql`SELECT count(*)::int AS n FROM events WHERE id = 'evt_rls_none'`),
    )[0]?.n;
    expect(written).toBe(0);
  });

  it("with org A set: sees only A's rows, cannot read, write, update or delete B's", async () => {
    const seen = await asApp(a.organizationId, async (tx) => ({
      orgs: rowsOf<{ id: string }>(await tx.execute(sql`SELECT id FROM organizations`)).map((r) => r.id),
      memberOrgs: rowsOf<{ organization_id: string }>(
        await tx.execute(sql`SELECT DISTINCT organization_id FROM members`),
      ).map((r) => r.organization_id),
      bMembers: await count(tx, 'members', sql`WHERE organization_id = ${b.organizationId}`),
    }));
    expect(seen).toEqual({ orgs: [a.organizationId], memberOrgs: [a.organizationId], bMembers: 0 });

    await expect(
      asApp(a.organizationId, (tx) =>
        tx.execute(
          sql`INSERT INTO events (id, organization_id, type, data) VALUES ('evt_rls_b', ${b.organizationId}, 'customer.created', '{}')`,
        ),
      ),
    ).rejects.toThrow();

    const touched = await asApp(a.organizationId, async (tx) => {
      const upd = await tx.execute(sql`UPDATE organizations SET name = 'hacked' WHERE id = ${b.organizationId}`);
      const del = await tx.execute(sql`DELETE FROM members WHERE organization_id = ${b.organizationId}`);
      return [upd, del].map((r) => {
        const res = r as { rowCount?: number | null; affectedRows?: number };
        return res.rowCount ?? res.affectedRows;
      });
    });
    expect(touched).toEqual([0, 0]);
    // Moving an own row into another tenant is refused too (WITH CHECK).
    await expect(
      asApp(a.organizationId, (tx) =>
        tx.execute(
          sql`UPDATE members SET organization_id = ${b.organizationId} WHERE organization_id = ${a.organizationId}`,
        ),
      ),
    ).rejects.toThrow();
    const bName = rowsOf<{ name: string }>(
      await h.admin.db.execute(sql`SELECT name FROM organizations WHERE id = ${b.organizationId}`),
    )[0]?.name;
    expect(bName).toBe('B');
    const bMembers = rowsOf<{ n: number }>(
      await h.admin.db.execute(sql`SELECT count(*)::int AS n FROM members WHERE organization_id = ${b.organizationId}`),
    )[0]?.n;
    expect(bMembers).toBe(1);
  });

  it('withTenant uses the same role and scope as these checks', async () => {
    const orgs = await withTenant(h.database.db, a.organizationId, async (tx) =>
      rowsOf<{ id: string; who: string }>(await tx.execute(sql`SELECT id, current_user AS who FROM organizations`)),
    );
    expect(orgs).toEqual([{ id: a.organizationId, who: APP_ROLE }]);
    // The setting is transaction-local: the next plain query is back to the owner role.
    const who = rowsOf<{ who: string }>(await h.admin.db.execute(sql`SELECT current_user AS who`))[0]?.who;
    expect(who).not.toBe(APP_ROLE);
  });

  it('withTenant on PostgreSQL: a read is one message with the settings, BEGIN goes out only with a write', async () => {
    if (!h.database.pool) return; // PGlite: an ordinary transaction, no round trips to save
    const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
    const original = proto.query;
    const sent: string[] = [];
    proto.query = function (this: unknown, ...args: unknown[]) {
      const first = args[0] as string | { text: string };
      sent.push(typeof first === 'string' ? first : first.text);
      return original.apply(this, args);
    };
    try {
      const read = await withTenant(h.database.db, a.organizationId, async (tx) =>
        rowsOf<{ id: string }>(await tx.execute(sql`SELECT id FROM organizations WHERE id <> ${'none'}`)),
      );
      expect(read).toEqual([{ id: a.organizationId }]);
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatch(/^SELECT set_config\('role'.*; SELECT id FROM organizations WHERE id <> 'none'$/);
      sent.length = 0;
      await withTenant(h.database.db, a.organizationId, async (tx) => {
        await tx.execute(sql`SELECT 1`);
        await tx.execute(sql`UPDATE organizations SET name = name WHERE id = ${a.organizationId}`);
        await tx.execute(sql`SELECT 2`);
      });
      const firsts = sent.map((t) => (t.startsWith('SELECT set_config') ? 'settings' : t.split(';')[0]));
      expect(firsts).toEqual(['settings', 'BEGIN', 'SELECT 2', 'COMMIT']);
    } finally {
      proto.query = original;
    }
  });

  it('a transaction-scoped advisory lock taken by a SELECT is held until the transaction ends', async () => {
    if (!h.database.pool) return; // PGlite: one connection, nobody else to be kept out
    // Asked on another connection (autocommit): true only while nobody holds the lock.
    const free = async (key: number) =>
      rowsOf<{ got: boolean }>(await h.admin.db.execute(sql`SELECT pg_try_advisory_xact_lock(4242, ${key}) AS got`))[0]
        ?.got;
    for (const [key, lock] of [
      [1, sql`SELECT pg_advisory_xact_lock(4242, 1)`],
      [2, sql`SELECT pg_try_advisory_xact_lock(4242, 2) AS got`],
    ] as const) {
      const freeInside = await withTenant(h.database.db, a.organizationId, async (tx) => {
        await tx.execute(lock);
        return free(key);
      });
      expect(freeInside, `lock ${key} held inside the transaction`).toBe(false);
      expect(await free(key)).toBe(true);
    }
  });

  it('a SELECT that writes (through a function) is part of the transaction: a later failure undoes it', async () => {
    await h.admin.db.execute(sql`CREATE OR REPLACE FUNCTION tenancy_test_rename(org text) RETURNS int
      LANGUAGE sql AS $$ UPDATE organizations SET name = 'Renamed' WHERE id = org RETURNING 1 $$`);
    await h.admin.db.execute(sql.raw(`GRANT EXECUTE ON FUNCTION tenancy_test_rename(text) TO ${APP_ROLE}`));
    await expect(
      withTenant(h.database.db, a.organizationId, async (tx) => {
        await tx.execute(sql`SELECT tenancy_test_rename(${a.organizationId})`);
        throw new Error('a later step failed');
      }),
    ).rejects.toThrow('a later step failed');
    const name = rowsOf<{ name: string }>(
      await h.admin.db.execute(sql`SELECT name FROM organizations WHERE id = ${a.organizationId}`),
    )[0]?.name;
    expect(name).toBe('A');
    // And it does write when the transaction commits.
    await withTenant(h.database.db, a.organizationId, (tx) =>
      tx.execute(sql`SELECT tenancy_test_rename(${a.organizationId})`),
    );
    const renamed = rowsOf<{ name: string }>(
      await h.admin.db.execute(sql`SELECT name FROM organizations WHERE id = ${a.organizationId}`),
    )[0]?.name;
    expect(renamed).toBe('Renamed');
    await h.admin.db.execute(sql`UPDATE organizations SET name = 'A' WHERE id = ${a.organizationId}`);
  });

  it('every table with an organization_id column has FORCE RLS and a tenant policy (future tables too)', async () => {
    const tables = rowsOf<{ table_name: string; force: boolean; enabled: boolean; policies: number }>(
      await h.admin.db.execute(sql`
        SELECT c.relname AS table_name, c.relrowsecurity AS enabled, c.relforcerowsecurity AS force,
               (SELECT count(*)::int FROM pg_policies p WHERE p.schemaname = 'public' AND p.tablename = c.relname) AS policies
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
          AND (EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'organization_id' AND NOT a.attisdropped)
               OR c.relname = 'organizations')
        ORDER BY 1`),
    );
    const names = tables.map((t) => t.table_name);
    expect(names).toEqual(
      expect.arrayContaining(['organizations', 'members', 'api_keys', 'events', 'idempotency_keys']),
    );
    for (const t of tables) {
      // customer_search: enabled, not forced, so its owner's tenant-bound functions keep the indexes.
      expect({ table: t.table_name, enabled: t.enabled, force: t.force }).toEqual({
        table: t.table_name,
        enabled: true,
        force: !RLS_NOT_FORCED_TABLES.has(t.table_name),
      });
      expect(t.policies, t.table_name).toBeGreaterThanOrEqual(1);
    }
    // The policy is the tenant check, for reads (USING) and writes (WITH CHECK).
    const policies = rowsOf<{ tablename: string; qual: string; with_check: string }>(
      await h.admin.db.execute(
        sql`SELECT tablename, qual, with_check FROM pg_policies WHERE schemaname = 'public' AND policyname = 'tenant_isolation'`,
      ),
    );
    expect(policies.map((p) => p.tablename).sort()).toEqual([...names].sort());
    for (const p of policies) {
      expect(p.qual, p.tablename).toMatch(/current_setting\('app\.organization_id'/);
      expect(p.with_check, p.tablename).toMatch(/current_setting\('app\.organization_id'/);
    }
  });
});

describe('event outbox: emit()', () => {
  let h: Harness;
  let a: TestUser;
  const actor: Actor = { kind: 'user', id: 'usr_test', role: 'owner' };
  beforeAll(async () => {
    h = await createHarness();
    a = await newTenant(h);
  });
  afterAll(async () => h?.close());

  const stored = async (id: string) =>
    rowsOf<{ type: string; organization_id: string; data: unknown; batched: boolean }>(
      await h.admin.db.execute(sql`SELECT type, organization_id, data,
        EXISTS (SELECT 1 FROM event_batches b WHERE b.tx = e.tx AND b.organization_id = e.organization_id) AS batched
        FROM events e WHERE id = ${id}`),
    );

  it('records the event in the same transaction, visible after commit', async () => {
    const { evt, inside } = await inTenant(h.database.db, a.organizationId, actor, async (ctx) => {
      const evt = await emit(ctx, 'customer.created', { customerId: 'cus_1', customer: { id: 'cus_1' } });
      const inside = await ctx.tx.select().from(events);
      return { evt, inside };
    });
    expect(evt.id).toMatch(/^evt_/);
    expect(inside.map((e) => e.id)).toContain(evt.id);
    expect(await stored(evt.id)).toEqual([
      {
        type: 'customer.created',
        organization_id: a.organizationId,
        data: { customerId: 'cus_1', customer: { id: 'cus_1' } },
        batched: true,
      },
    ]);
  });

  it('leaves nothing when the transaction rolls back', async () => {
    let id = '';
    await expect(
      inTenant(h.database.db, a.organizationId, actor, async (ctx) => {
        id = (await emit(ctx, 'invoice.paid', { invoiceId: 'inv_1' })).id;
        throw new Error('the change failed after emitting');
      }),
    ).rejects.toThrow('the change failed');
    expect(id).toMatch(/^evt_/);
    expect(await stored(id)).toEqual([]);
  });

  it('refuses unknown names and accepts workflow.* names', async () => {
    for (const name of ['customer.exploded', 'webhook.test', '*', '', 'workflow.', 'workflow.bad name']) {
      await expect(
        inTenant(h.database.db, a.organizationId, actor, (ctx) => emit(ctx, name, {})),
        name,
      ).rejects.toBeInstanceOf(AppError);
    }
    const wf = await inTenant(h.database.db, a.organizationId, actor, (ctx) =>
      emit(ctx, 'workflow.crew_dispatched', { step: 1 }),
    );
    expect((await stored(wf.id))[0]?.type).toBe('workflow.crew_dispatched');
  });
});
