import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    database:
      | { kind: 'pglite'; dump: string; dataDir: string }
      | { kind: 'postgres'; url: string; template: string; prefix: string; owner: string; service: string };
  }
}

/**
 * The least-privilege setup of the README, as the tests run it on PostgreSQL: the schema
 * is owned (and migrated) by a non-superuser owner role, and the app connects as a
 * service role that is neither superuser nor owner, NOINHERIT, with the application and
 * platform roles granted for SET ROLE only. Roles are cluster-wide and other runs may
 * create them at the same moment, hence the exception handlers.
 */
export const TEST_OWNER_ROLE = 'crm_test_owner';
export const TEST_SERVICE_ROLE = 'crm_test_service';
const ROLES_SQL = `DO $$ BEGIN
  BEGIN CREATE ROLE crm_app NOLOGIN NOBYPASSRLS; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END;
  BEGIN CREATE ROLE crm_platform NOLOGIN BYPASSRLS; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END;
  BEGIN CREATE ROLE ${TEST_OWNER_ROLE} LOGIN NOSUPERUSER NOCREATEROLE NOBYPASSRLS; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END;
  BEGIN CREATE ROLE ${TEST_SERVICE_ROLE} LOGIN NOSUPERUSER NOCREATEROLE NOBYPASSRLS NOINHERIT; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END;
END $$;
GRANT crm_app, crm_platform TO ${TEST_SERVICE_ROLE};`;

/**
 * Migrates one template database per run; every test file then gets its own copy
 * (a PGlite loaded from the template's dump, or `CREATE DATABASE … TEMPLATE` on
 * PostgreSQL), and so does every server process a test starts (a copy of the migrated
 * data directory, or the same TEMPLATE), so they never share data and never pay for
 * migrations again.
 */
export default async function setup(project: TestProject) {
  // The process tests start the compiled entries (test/platform/processes.ts): compile once
  // here when a source changed since dist/ was built (a no-op after `npm ci`).
  const built = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error(`scripts/build.mjs failed (exit ${built.status})`);
  const url = process.env.TEST_DATABASE_URL;
  if (url) {
    const prefix = `crm_t${process.pid}_${Date.now().toString(36)}`;
    const template = `${prefix}_tpl`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await dropStaleDatabases(admin);
    await admin.query(ROLES_SQL).catch(async () => admin.query(ROLES_SQL)); // a concurrent GRANT: once more
    await admin.query(`CREATE DATABASE ${template} OWNER ${TEST_OWNER_ROLE}`);
    await admin.query(`ALTER DATABASE ${template} SET synchronous_commit = off`); // see createFromTemplate
    const database = await openDatabase({
      databaseUrl: withUser(withDatabase(url, template), TEST_OWNER_ROLE),
      poolMax: 1,
    });
    await migrate(database);
    await database.close();
    project.provide('database', {
      kind: 'postgres',
      url,
      template,
      prefix,
      owner: TEST_OWNER_ROLE,
      service: TEST_SERVICE_ROLE,
    });
    return async () => {
      const { rows } = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [
        `${prefix}%`,
      ]);
      for (const { datname } of rows) {
        await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => {});
      }
      await admin.end();
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'crm-test-'));
  // Migrated once, on disk: the in-process files load its dump, and the process tests copy
  // the directory itself as their server's DATA_DIR (test/platform/processes.ts).
  const dataDir = join(dir, 'data');
  const client = await PGlite.create(dataDir, { extensions: { pg_trgm } });
  const database = await openDatabase({ pglite: client });
  await migrate(database);
  const dump = await client.dumpDataDir('none');
  const file = join(dir, 'template.tar');
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  await client.close();
  project.provide('database', { kind: 'pglite', dump: file, dataDir });
  return () => rmSync(dir, { recursive: true, force: true });
}

/**
 * `CREATE DATABASE name TEMPLATE template`; two copies begun at the same instant make PostgreSQL
 * refuse one, which tries again. A test database commits without waiting for its WAL to reach the
 * disk (`synchronous_commit = off`): a commit then costs about 0.6 ms instead of 9 on this
 * machine, and the suite commits tens of thousands of times. Nothing a test checks depends on it:
 * a committed transaction is just as visible and just as atomic; only a crash of PostgreSQL itself
 * (which no test causes) could lose the last few.
 */
export async function createFromTemplate(admin: pg.Client, name: string, template: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
      await admin.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
      return;
    } catch (err) {
      if (attempt > 20 || !/being accessed by other users/.test(String(err))) throw err;
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    }
  }
}

export function withUser(url: string, user: string): string {
  const u = new URL(url);
  u.username = user;
  u.password = '';
  return u.toString();
}

export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Databases of runs that died without their teardown (killed, crashed) and are over 6 hours old. */
const STALE_MS = 6 * 3600 * 1000;

async function dropStaleDatabases(admin: pg.Client): Promise<void> {
  const { rows } = await admin.query<{ datname: string }>(
    "SELECT datname FROM pg_database WHERE datname LIKE 'crm\\_t%'",
  );
  for (const { datname } of rows) {
    const started = /^crm_t\d+_([0-9a-z]+)_/.exec(datname)?.[1];
    if (!started || Date.now() - Number.parseInt(started, 36) < STALE_MS) continue;
    await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => {});
  }
}
