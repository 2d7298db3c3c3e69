import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { rowsOf } from '../../src/db/client.js';
import { APP_ROLE, migrate } from '../../src/db/migrate.js';
import { asPlatform } from '../../src/platform/cross-tenant.js';
import { transactionAs, withTenant } from '../../src/platform/tenancy.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

const onPostgres = inject('database').kind === 'postgres';

/**
 * The database side of least privilege (README, PostgreSQL): what a tenant transaction
 * can reach, what the service's login role is, and that platform code has exactly one
 * way across tenants. On PGlite (one superuser) the role checks that depend on the
 * login role are skipped; the grants of the application role hold on both.
 */
describe('least privilege', () => {
  let h: Harness;
  let a: TestUser;
  let b: TestUser;
  let bCustomer: string;
  beforeAll(async () => {
    h = await createHarness();
    a = await newTenant(h, { name: 'A' });
    b = await newTenant(h, { name: 'B' });
    await a.call('POST', '/api/customers', { firstName: 'Alice', lastName: 'Zephyr', email: 'alice@a.example' });
    const res = await b.call('POST', '/api/customers', {
      firstName: 'Bob',
      lastName: 'Zephyr',
      email: 'bob@b.example',
    });
    bCustomer = res.json().data.id;
  });
  afterAll(async () => h?.close());

  const rows = <T>(r: unknown) => rowsOf<T>(r);
  /** Drizzle wraps the driver's error ("Failed query: …"); the reason is in its cause. */
  const deniedBy = async (run: () => Promise<unknown>) => {
    const err = await run().then(
      () => undefined,
      (e: unknown) => e as Error & { cause?: unknown },
    );
    expect(err, 'expected a refusal').toBeDefined();
    expect(`${err?.message} ${String(err?.cause)}`).toMatch(/permission denied/);
  };

  it('a tenant transaction sees only its own customer_search rows, directly or through the search functions', async () => {
    const seen = await withTenant(h.database.db, a.organizationId, async (tx) => ({
      direct: rows<{ organization_id: string }>(
        await tx.execute(sql`SELECT DISTINCT organization_id FROM customer_search`),
      ).map((r) => r.organization_id),
      byId: rows<{ n: number }>(
        await tx.execute(sql`SELECT count(*)::int AS n FROM customer_search WHERE customer_id = ${bCustomer}`),
      )[0]?.n,
      matched: rows<{ id: string }>(
        await tx.execute(sql`SELECT customer_search_matching(ARRAY['%zephyr%']) AS id`),
      ).map((r) => r.id),
      tagged: rows<{ id: string }>(await tx.execute(sql`SELECT customer_search_tagged('x') AS id`)).length,
      changed: rows<{ n: number }>(
        await tx.execute(sql`WITH u AS (UPDATE customer_search SET search_text = 'x' WHERE customer_id = ${bCustomer} RETURNING 1)
                             SELECT count(*)::int AS n FROM u`),
      )[0]?.n,
    }));
    expect(seen.direct).toEqual([a.organizationId]);
    expect(seen.byId).toBe(0);
    expect(seen.matched).toHaveLength(1);
    expect(seen.matched).not.toContain(bCustomer);
    expect(seen.tagged).toBe(0);
    expect(seen.changed).toBe(0);
    // Writing a row into another tenant is refused (WITH CHECK), and B's row is intact.
    await expect(
      withTenant(h.database.db, a.organizationId, (tx) =>
        tx.execute(sql`UPDATE customer_search SET organization_id = ${b.organizationId}`),
      ),
    ).rejects.toThrow();
    const res = await b.call('GET', '/api/customers', undefined, { query: { search: 'zephyr' } });
    expect(res.json().data.map((c: { id: string }) => c.id)).toEqual([bCustomer]);
  });

  it('a tenant transaction cannot read users, password hashes, sessions or verifications', async () => {
    for (const statement of [
      sql`SELECT password FROM accounts LIMIT 1`,
      sql`SELECT count(*) FROM accounts`,
      sql`SELECT token FROM sessions LIMIT 1`,
      sql`SELECT count(*) FROM sessions`,
      sql`SELECT value FROM verifications LIMIT 1`,
      sql`SELECT count(*) FROM users`,
      sql`SELECT email FROM users LIMIT 1`,
      sql`UPDATE users SET name = 'x'`,
      sql`UPDATE member_users SET name = 'x'`,
    ]) {
      await deniedBy(() => withTenant(h.database.db, a.organizationId, (tx) => tx.execute(statement)));
    }
  });

  it("a tenant transaction reads its own members' names and emails, and 0 rows of another organization's users", async () => {
    const [bUser] = await asPlatform(h.database.db, async (tx) =>
      rows<{ id: string; email: string }>(
        await tx.execute(
          sql`SELECT u.id, u.email FROM users u JOIN members m ON m.user_id = u.id WHERE m.organization_id = ${b.organizationId}`,
        ),
      ),
    );
    expect(bUser?.email).toBe(b.email);
    const seen = await withTenant(h.database.db, a.organizationId, async (tx) => ({
      all: rows<{ id: string; email: string }>(await tx.execute(sql`SELECT id, email FROM member_users`)),
      other: rows<{ n: number }>(
        await tx.execute(
          sql`SELECT count(*)::int AS n FROM member_users WHERE id = ${bUser?.id ?? ''} OR email = ${b.email}`,
        ),
      )[0]?.n,
    }));
    expect(seen.all.map((u) => u.email)).toEqual([a.email]);
    expect(seen.other).toBe(0);
    // Without a tenant set, the view shows no one.
    const outside = await transactionAs(h.database.db, { role: APP_ROLE }, async (tx) =>
      rows<{ n: number }>(await tx.execute(sql`SELECT count(*)::int AS n FROM member_users`)),
    );
    expect(outside[0]?.n).toBe(0);
    // The member list still names its members.
    const list = await a.call('GET', '/api/members');
    expect(list.json().data.map((m: { email: string }) => m.email)).toEqual([a.email]);
  });

  it('asPlatform reaches across tenants (and credentials) as the platform role', async () => {
    const seen = await asPlatform(h.database.db, async (tx) => ({
      who: rows<{ who: string }>(await tx.execute(sql`SELECT current_user AS who`))[0]?.who,
      orgs: rows<{ n: number }>(
        await tx.execute(
          sql`SELECT count(*)::int AS n FROM organizations WHERE id IN (${a.organizationId}, ${b.organizationId})`,
        ),
      )[0]?.n,
      accounts: rows<{ n: number }>(await tx.execute(sql`SELECT count(*)::int AS n FROM accounts`))[0]?.n,
    }));
    expect(seen.who).toBe('crm_platform');
    expect(seen.orgs).toBe(2);
    expect(seen.accounts).toBeGreaterThanOrEqual(2);
  });

  it('a database that is current gets no statement from migrate (no DDL, no catalog change)', async () => {
    const snapshot = async () =>
      rows<{ v: string }>(
        await h.admin.db.execute(sql`
          SELECT string_agg(x, ',' ORDER BY x) AS v FROM (
            SELECT 'c' || oid || ':' || xmin::text AS x FROM pg_class WHERE relnamespace = 'public'::regnamespace
            UNION ALL SELECT 'p' || oid || ':' || xmin::text FROM pg_policy
          ) s`),
      )[0]?.v;
    const before = await snapshot();
    expect(await migrate(h.admin)).toEqual({ applied: [], statements: [] });
    if (onPostgres) expect(await migrate(h.database)).toEqual({ applied: [], statements: [] });
    expect(await snapshot()).toBe(before);
  });

  it('migrate repairs a missing policy, grant and FORCE in place (and only those)', async () => {
    await h.admin.db.execute(sql`DROP POLICY tenant_isolation ON properties`);
    await h.admin.db.execute(sql`ALTER TABLE jobs NO FORCE ROW LEVEL SECURITY`);
    await h.admin.db.execute(sql`GRANT SELECT ON accounts TO crm_app`);
    const report = await migrate(h.admin);
    expect(report.applied).toEqual([]);
    expect(report.statements.sort()).toEqual(
      [
        'ALTER TABLE "jobs" FORCE ROW LEVEL SECURITY',
        `CREATE POLICY tenant_isolation ON "properties" USING (organization_id = current_setting('app.organization_id'::text, true)) WITH CHECK (organization_id = current_setting('app.organization_id'::text, true))`,
        'REVOKE SELECT ON "accounts" FROM crm_app',
      ].sort(),
    );
    expect((await migrate(h.admin)).statements).toEqual([]);
  });

  describe.skipIf(!onPostgres)('the service login role (PostgreSQL)', () => {
    it('is neither superuser nor BYPASSRLS, inherits nothing and owns no table', async () => {
      const [me] = rows<{ who: string; su: boolean; bypass: boolean; inherit: boolean; owned: number }>(
        await h.database.db.execute(sql`
          SELECT r.rolname AS who, r.rolsuper AS su, r.rolbypassrls AS bypass, r.rolinherit AS inherit,
                 (SELECT count(*)::int FROM pg_class c WHERE c.relowner = r.oid) AS owned
          FROM pg_roles r WHERE r.rolname = current_user`),
      );
      expect(me).toMatchObject({ su: false, bypass: false, inherit: false, owned: 0 });
      expect(me?.who).not.toMatch(/^crm_(app|platform)$/);
      // Outside withTenant / asPlatform it can read nothing at all.
      await deniedBy(() => h.database.db.execute(sql`SELECT count(*) FROM customers`));
      await deniedBy(() => h.database.db.execute(sql`SELECT count(*) FROM accounts`));
    });

    it('RESET ROLE inside a tenant transaction gives neither superuser, owner nor platform powers', async () => {
      const probe = (statement: ReturnType<typeof sql>) =>
        withTenant(h.database.db, a.organizationId, async (tx) => {
          await tx.execute(sql`RESET ROLE`);
          return tx.execute(statement);
        });
      const [who] = rows<{ who: string; su: string }>(
        await probe(sql`SELECT current_user AS who, current_setting('is_superuser') AS su`),
      );
      expect(who?.su).toBe('off');
      expect(who?.who).not.toBe('crm_platform');
      for (const statement of [
        sql`SELECT password FROM accounts`,
        sql`SELECT count(*) FROM customers`,
        sql`SELECT count(*) FROM customer_search`,
        sql`ALTER TABLE customers NO FORCE ROW LEVEL SECURITY`,
        sql`DROP POLICY tenant_isolation ON customers`,
        sql`SET ROLE crm_test_owner`,
      ]) {
        await expect(probe(statement)).rejects.toThrow();
      }
    });
  });
});
