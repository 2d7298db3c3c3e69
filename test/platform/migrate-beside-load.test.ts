import { spawn } from 'node:child_process';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { rowsOf } from '../../src/db/client.js';
import { migrate, migrateOnStart } from '../../src/db/migrate.js';
import { withUser } from '../global-setup.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { entryArgs } from './processes.js';

const info = inject('database');

const WORKERS = 6;
const MIN_ROUNDS = 15;
const MAX_ROUNDS = 120;
const MIGRATIONS = 6;
const ADMIN_RUNS = 2;
// Bounded by counts, not by time; the limit below only stops a hung run on a loaded machine.

/**
 * Issue 18: starting any process used to re-apply tenant isolation as separate
 * DROP POLICY / CREATE POLICY statements, so a loaded API answered 500, 404 and
 * empty lists meanwhile. Here a real HTTP API (the least-privilege service role)
 * serves concurrent creates, reads, lists and searches in three tenants while a
 * second process's start-up migration runs again and again (as the owner, and as
 * a superuser-only setup) and `npm run admin -- set-plan` runs as a real process.
 * Every answer is checked: no 5xx, no 404 for an id just created, no empty list.
 */
describe.skipIf(info.kind !== 'postgres')('migrating beside a loaded API (PostgreSQL)', () => {
  let h: Harness;
  let tenants: TestUser[];
  let base: string;
  let serviceUrl: string;
  let ownerUrl: string;
  beforeAll(async () => {
    h = await createHarness();
    tenants = [await newTenant(h), await newTenant(h), await newTenant(h)];
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    const address = h.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    base = `http://127.0.0.1:${address.port}`;
    serviceUrl = (h.database.pool as unknown as { options: { connectionString: string } }).options.connectionString;
    if (info.kind !== 'postgres') return;
    ownerUrl = withUser(serviceUrl, info.owner);
  });
  afterAll(async () => h?.close());

  function runAdmin(orgId: string): Promise<{ code: number | null; output: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [...entryArgs('src/admin.ts'), 'set-plan', orgId, 'business'], {
        env: {
          ...process.env,
          NODE_ENV: 'test',
          BASE_URL: base,
          DATABASE_URL: serviceUrl,
          MIGRATION_DATABASE_URL: ownerUrl,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d) => {
        output += d;
      });
      child.stderr.on('data', (d) => {
        output += d;
      });
      child.on('exit', (code) => resolve({ code, output }));
    });
  }

  it('answers every request correctly while migrations and the admin command run', async () => {
    const failures: string[] = [];
    let answered = 0;
    let created = 0;
    let migratorDone = false;
    const call = async (user: TestUser, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { cookie: user.cookie, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      answered++;
      const text = await res.text();
      if (res.status >= 500) failures.push(`${method} ${path} → ${res.status} ${text.slice(0, 200)}`);
      return { status: res.status, json: () => JSON.parse(text) };
    };

    const load = async (w: number) => {
      const user = tenants[w % tenants.length] as TestUser;
      for (let round = 0; round < MAX_ROUNDS && (round < MIN_ROUNDS || !migratorDone); round++) {
        const name = `Load${w}x${round}`;
        const made = await call(user, 'POST', '/api/customers', { firstName: name, lastName: 'Zed' });
        if (made.status !== 201) {
          failures.push(`create ${name} → ${made.status}`);
          continue;
        }
        created++;
        const id = made.json().data.id as string;
        const read = await call(user, 'GET', `/api/customers/${id}`);
        if (read.status !== 200 || read.json().data.id !== id) failures.push(`read ${id} → ${read.status}`);
        const list = await call(user, 'GET', '/api/customers?limit=5');
        if (list.status !== 200 || list.json().data.length === 0) failures.push(`list → ${list.status} empty`);
        if (round % 3 === 0) {
          const found = await call(user, 'GET', `/api/customers?search=${name.toLowerCase()}`);
          const ids = found.status === 200 ? found.json().data.map((c: { id: string }) => c.id) : [];
          if (!ids.includes(id)) failures.push(`search ${name} → ${found.status} ${JSON.stringify(ids)}`);
        }
      }
    };

    const migrator = async () => {
      const reports = [];
      try {
        for (let i = 0; i < MIGRATIONS; i++) {
          // A second process's start-up, as the owner role, then as a superuser-only setup.
          reports.push(await migrateOnStart({ ...h.config, migrationDatabaseUrl: ownerUrl }, h.database));
          reports.push(await migrate(h.admin));
          if (i < ADMIN_RUNS) {
            const admin = await runAdmin((tenants[0] as TestUser).organizationId);
            if (admin.code !== 0) failures.push(`admin exited ${admin.code}: ${admin.output}`);
          }
        }
      } finally {
        migratorDone = true;
      }
      return reports;
    };

    const [reports] = await Promise.all([migrator(), ...Array.from({ length: WORKERS }, (_, w) => load(w))]);
    expect(failures).toEqual([]);
    // The schema was current: no run issued any statement.
    expect(reports.every((r) => r.applied.length === 0 && r.statements.length === 0)).toBe(true);
    expect(created).toBeGreaterThanOrEqual(WORKERS * MIN_ROUNDS);
    expect(answered).toBeGreaterThan(created * 3);
    // Every 201 is in the database (nothing lost, nothing extra).
    const ids = tenants.map((t) => t.organizationId);
    const [row] = rowsOf<{ n: number }>(
      await h.admin.db.execute(
        sql`SELECT count(*)::int AS n FROM customers WHERE organization_id IN (${sql.join(
          ids.map((id) => sql`${id}`),
          sql`, `,
        )})`,
      ),
    );
    expect(row?.n).toBe(created);
  }, 300_000);
});
