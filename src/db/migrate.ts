import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { type Database, type Db, rowsOf } from './client.js';

export const APP_ROLE = 'crm_app';
const MIGRATIONS = fileURLToPath(new URL('../../drizzle', import.meta.url));
/** Serialises concurrent start-ups (several API processes and workers) on one PostgreSQL. */
const MIGRATION_LOCK = 815_042_117;

/**
 * Applies the committed drizzle-kit migrations, then (re)asserts tenant isolation.
 *
 * Tenant isolation is applied by rule rather than by hand per table: every table
 * with an `organization_id` column (and `organizations` on its `id`) gets RLS
 * enabled and FORCED with one policy, and the application role gets DML grants.
 * A table added later cannot forget it. The statements are idempotent.
 */
export async function migrate(database: Database, log?: MigrationLog): Promise<string[]> {
  const before = await appliedCount(database.db);
  await applyMigrations(database);
  const after = await appliedCount(database.db);
  const tags = (
    JSON.parse(readFileSync(`${MIGRATIONS}/meta/_journal.json`, 'utf8')) as { entries: Array<{ tag: string }> }
  ).entries.map((e) => e.tag);
  const applied = tags.slice(before, after);
  log?.info(
    { applied, total: after },
    applied.length > 0
      ? `database migrated: applied ${applied.join(', ')} (${after} migrations in all)`
      : `database up to date (${after} migrations)`,
  );
  return applied;
}

/** Where migrate() reports what it applied (the start-up log). */
export interface MigrationLog {
  info(obj: object, msg: string): void;
}

async function appliedCount(db: Db): Promise<number> {
  try {
    const [row] = rowsOf<{ n: number }>(
      await db.execute(sql`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`),
    );
    return Number(row?.n ?? 0);
  } catch {
    return 0; // a fresh database: the bookkeeping table does not exist yet
  }
}

async function applyMigrations(database: Database): Promise<void> {
  if (database.kind === 'postgres') {
    const client = await (database.pool as NonNullable<Database['pool']>).connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      try {
        // Everything on the one connection that holds the lock (a pool of 1 would otherwise deadlock).
        const db = drizzlePg({ client });
        await migratePg(db, { migrationsFolder: MIGRATIONS });
        await ensureTenantIsolation(db as unknown as Db);
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      }
    } finally {
      client.release();
    }
  } else {
    await migratePglite(database.db as unknown as PgliteDatabase, { migrationsFolder: MIGRATIONS });
    await ensureTenantIsolation(database.db);
  }
}

async function ensureTenantIsolation(db: Db): Promise<void> {
  // CREATE ROLE is cluster-wide: a second database on the same cluster finds it already there.
  await db.execute(
    sql.raw(`DO $$ BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${APP_ROLE}') THEN
        CREATE ROLE ${APP_ROLE} NOLOGIN NOBYPASSRLS;
      END IF;
    EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
    END $$`),
  );
  await db.execute(sql.raw(`GRANT USAGE ON SCHEMA public TO ${APP_ROLE}`));
  await db.execute(sql.raw(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${APP_ROLE}`));
  await db.execute(sql.raw(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${APP_ROLE}`));
  const rows = rowsOf<{ table_name: string; column_name: string }>(
    await db.execute(sql`
    SELECT c.table_name, c.column_name FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
      AND (c.column_name = 'organization_id' OR (c.table_name = 'organizations' AND c.column_name = 'id'))
    ORDER BY c.table_name`),
  );
  for (const row of rows) {
    const table = `"${row.table_name}"`;
    const check = `${row.column_name} = current_setting('app.organization_id', true)`;
    for (const statement of [
      `ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`,
      `ALTER TABLE ${table} FORCE ROW LEVEL SECURITY`,
      `DROP POLICY IF EXISTS tenant_isolation ON ${table}`,
      `CREATE POLICY tenant_isolation ON ${table} USING (${check}) WITH CHECK (${check})`,
    ]) {
      await db.execute(sql.raw(statement));
    }
  }
}
