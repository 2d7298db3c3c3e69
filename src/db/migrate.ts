import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type pg from 'pg';
import type { Config } from '../config.js';
import { type Database, openDatabase, PLATFORM_ROLE } from './client.js';
import { releaseClient, transactionOn } from './pg-transaction.js';

/** Tenant transactions run as this role: no BYPASSRLS, DML on tenant tables, nothing on credentials. */
export const APP_ROLE = 'crm_app';
/**
 * Cross-tenant platform code runs as this role (BYPASSRLS), switched to only by
 * `asPlatform` (src/platform/cross-tenant.ts) and by Better Auth's own pool.
 */
export { PLATFORM_ROLE };

const MIGRATIONS = fileURLToPath(new URL('../../drizzle', import.meta.url));
/** Serialises concurrent start-ups (several API processes and workers) on one PostgreSQL. */
const MIGRATION_LOCK = 815_042_117;

/**
 * Tables the application role may not touch at all: Better Auth's users, credentials and
 * sessions (every organization's names and emails, password hashes, session tokens), the
 * rate-limit counters (keyed by email), the revocation generation
 * (src/platform/auth/revocations.ts) and the global map of secrets to organizations (written by
 * tenants only through its functions, drizzle/0036_secret_lookups.sql). Only the platform role
 * reads them. A tenant's member list reads its own members' names and emails through the view
 * `member_users` (drizzle/0037_auth_tables_closed.sql), limited to the organization of the
 * transaction.
 */
const PLATFORM_ONLY_TABLES = new Set([
  'users',
  'accounts',
  'sessions',
  'verifications',
  'rate_limits',
  'auth_generation',
  'secret_lookups',
]);
/**
 * Tenant tables whose RLS is enabled but not forced, so their owner can read them
 * through SECURITY DEFINER functions bound to `app.organization_id`: under RLS the
 * planner refuses non-LEAKPROOF operators (LIKE, pg_trgm, @>) as index conditions.
 * See docs/customers.md; the functions ship in drizzle/*_customer_search_functions.sql.
 */
export const RLS_NOT_FORCED_TABLES = new Set(['customer_search']);

const DML = ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] as const;
const TENANT_CHECK = (column: string) => `(${column} = current_setting('app.organization_id'::text, true))`;

/** What a migrate call changed; both empty when the database was already current. */
export interface MigrationReport {
  /** Migration tags (file names without `.sql`) in the order applied. */
  applied: string[];
  statements: string[];
}

/** The few raw-SQL operations migrate needs, identical on a pg client and on PGlite. */
interface Sql {
  rows<T>(text: string): Promise<T[]>;
  run(text: string): Promise<void>;
}

/**
 * Brings the database to the schema this code expects: pending drizzle-kit
 * migrations, then tenant isolation by rule. Every table with an `organization_id`
 * column (and `organizations` on its `id`) gets RLS enabled and FORCED with the
 * `tenant_isolation` policy, and the roles get their grants, so a table added by a
 * later migration cannot forget them.
 *
 * The work is computed from the catalogs first: a database that is already current
 * gets no statement at all (no DDL, no lock), so starting a worker or an admin
 * command beside a loaded API changes nothing. Otherwise everything missing is
 * applied in ONE transaction under a transaction-level advisory lock, after
 * recomputing under the lock; a policy is created or altered in place, never
 * dropped, so no moment exists where a table has forced RLS and no policy.
 */
export async function migrate(
  database: Database,
  log?: MigrationLog,
  options: MigrateOptions = {},
): Promise<MigrationReport> {
  const report = await migrateOnce(database, options);
  const shipped = readMigrationFiles({ migrationsFolder: MIGRATIONS }).length;
  log?.info(
    { applied: report.applied, statements: report.statements.length, total: shipped },
    report.applied.length > 0 || report.statements.length > 0
      ? `database migrated: applied ${report.applied.join(', ') || 'no migration'}, ${report.statements.length} statements (${shipped} migrations in all)`
      : `database up to date (${shipped} migrations)`,
  );
  return report;
}

/** How far to migrate: tests only (a database as an older version left it, to migrate forward with rows). */
export interface MigrateOptions {
  /** Apply the migrations up to and including this one (its tag, `0034_workflow_event_batches`), none after. */
  through?: string;
}

/** Where migrate() reports what it applied (the start-up log). */
export interface MigrationLog {
  info(obj: object, msg: string): void;
}

async function migrateOnce(database: Database, options: MigrateOptions): Promise<MigrationReport> {
  if (database.kind === 'postgres') {
    const client = await (database.pool as pg.Pool).connect();
    try {
      const q = pgSql(client);
      if ((await pending(q, options)).length === 0) return { applied: [], statements: [] };
      return await transactionOn(client, async () => {
        await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
        return apply(q, options);
      });
    } finally {
      releaseClient(client);
    }
  }
  const lite = database.pglite;
  if (!lite) throw new Error('PGlite database without its client');
  const outside: Sql = {
    rows: async (text) => (await lite.query(text)).rows as never,
    run: async (text) => void (await lite.exec(text)),
  };
  if ((await pending(outside, options)).length === 0) return { applied: [], statements: [] };
  return lite.transaction((tx) =>
    apply(
      {
        rows: async (text) => (await tx.query(text)).rows as never,
        run: async (text) => void (await tx.exec(text)),
      },
      options,
    ),
  );
}

/**
 * What every process runs at start-up: migrate as the schema owner when
 * MIGRATION_DATABASE_URL is set (one connection, closed after), else on the
 * process's own database. A least-privilege service role without it migrates
 * nothing: it finds the schema current, or fails naming what is missing.
 */
export async function migrateOnStart(config: Config, database: Database, log?: MigrationLog): Promise<MigrationReport> {
  if (database.kind !== 'postgres' || !config.migrationDatabaseUrl) return migrate(database, log);
  const owner = await openDatabase({ databaseUrl: config.migrationDatabaseUrl, poolMax: 1 });
  try {
    return await migrate(owner, log);
  } finally {
    await owner.close();
  }
}

function pgSql(client: pg.PoolClient): Sql {
  return {
    rows: async (text) => (await client.query(text)).rows,
    run: async (text) => void (await client.query(text)),
  };
}

async function apply(q: Sql, options: MigrateOptions): Promise<MigrationReport> {
  const report: MigrationReport = { applied: [], statements: [] };
  const run = async (statement: string) => {
    await q.run(statement);
    report.statements.push(statement);
  };
  // Roles first: custom migrations grant EXECUTE to them.
  for (const statement of await roleStatements(q)) await run(statement);
  const migrations = await pendingMigrations(q, options);
  if (migrations.length > 0 && (await lastAppliedMigration(q)) === undefined) {
    await run('CREATE SCHEMA IF NOT EXISTS drizzle');
    await run(
      'CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)',
    );
  }
  for (const m of migrations) {
    for (const statement of m.sql) if (statement.trim() !== '') await q.run(statement);
    await q.run(
      `INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('${m.hash}', ${Number(m.folderMillis)})`,
    );
    report.applied.push(tagOf(m.folderMillis) ?? m.hash);
  }
  for (const statement of await isolationStatements(q)) await run(statement);
  return report;
}

/** A migration's file name (`0007_payments_refunds`) from drizzle-kit's journal, for logs a person reads. */
function tagOf(folderMillis: number): string | undefined {
  return journal().find((e) => e.when === folderMillis)?.tag;
}

function journal(): Array<{ when: number; tag: string }> {
  return (
    JSON.parse(readFileSync(`${MIGRATIONS}/meta/_journal.json`, 'utf8')) as {
      entries: Array<{ when: number; tag: string }>;
    }
  ).entries;
}

/** Everything `apply` would do, computed from the catalogs alone (reads only). */
async function pending(q: Sql, options: MigrateOptions): Promise<string[]> {
  const roles = await roleStatements(q);
  const migrations = await pendingMigrations(q, options);
  if (roles.length > 0 || migrations.length > 0) return [...roles, ...migrations.map((m) => `migration ${m.hash}`)];
  return isolationStatements(q);
}

async function roleStatements(q: Sql): Promise<string[]> {
  const roles = await q.rows<{ rolname: string; rolbypassrls: boolean }>(
    `SELECT rolname, rolbypassrls FROM pg_roles WHERE rolname IN ('${APP_ROLE}', '${PLATFORM_ROLE}')`,
  );
  const out: string[] = [];
  for (const [name, bypass] of [
    [APP_ROLE, false],
    [PLATFORM_ROLE, true],
  ] as const) {
    const role = roles.find((r) => r.rolname === name);
    if (role && role.rolbypassrls !== bypass) {
      throw new Error(
        `Role ${name} must be ${bypass ? 'BYPASSRLS' : 'NOBYPASSRLS'}: ALTER ROLE ${name} ${bypass ? '' : 'NO'}BYPASSRLS`,
      );
    }
    // CREATE ROLE is cluster-wide: a second database on the same cluster may create it at the same moment.
    if (!role) {
      out.push(`DO $$ BEGIN
        CREATE ROLE ${name} NOLOGIN ${bypass ? '' : 'NO'}BYPASSRLS;
      EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
      END $$`);
    }
  }
  return out;
}

async function lastAppliedMigration(q: Sql): Promise<number | undefined> {
  const [exists] = await q.rows<{ t: string | null }>(`SELECT to_regclass('drizzle.__drizzle_migrations')::text AS t`);
  if (!exists?.t) return undefined;
  const [last] = await q.rows<{ created_at: string | null }>(
    'SELECT created_at FROM drizzle.__drizzle_migrations ORDER BY created_at DESC LIMIT 1',
  );
  return last?.created_at == null ? 0 : Number(last.created_at);
}

/** drizzle-kit's own rule: a migration is pending when it is newer than the last one applied. */
async function pendingMigrations(q: Sql, options: MigrateOptions = {}) {
  const last = await lastAppliedMigration(q);
  const through = options.through === undefined ? undefined : journal().find((e) => e.tag === options.through)?.when;
  if (options.through !== undefined && through === undefined) throw new Error(`No migration ${options.through}`);
  return readMigrationFiles({ migrationsFolder: MIGRATIONS }).filter(
    (m) => (last === undefined || last < m.folderMillis) && (through === undefined || m.folderMillis <= through),
  );
}

interface TableState {
  name: string;
  kind: string;
  tenant_column: string | null;
  rls: boolean;
  force: boolean;
  app: string[] | null;
  platform: string[] | null;
  qual: string | null;
  with_check: string | null;
  has_policy: boolean;
}

/** The GRANT/REVOKE/ALTER/CREATE POLICY statements that tenant isolation still lacks. */
async function isolationStatements(q: Sql): Promise<string[]> {
  const privileges = (role: string, kind: 'table' | 'sequence') =>
    kind === 'table'
      ? `ARRAY(SELECT p FROM unnest(ARRAY['SELECT','INSERT','UPDATE','DELETE']) p WHERE has_table_privilege('${role}', c.oid, p))`
      : `ARRAY(SELECT p FROM unnest(ARRAY['USAGE','SELECT']) p WHERE has_sequence_privilege('${role}', c.oid, p))`;
  const [roles] = await q.rows<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_roles WHERE rolname IN ('${APP_ROLE}', '${PLATFORM_ROLE}')`,
  );
  const rolesExist = roles?.n === 2;
  const tables = await q.rows<TableState>(`
    SELECT c.relname AS name, c.relkind::text AS kind,
      CASE WHEN c.relname = 'organizations' THEN 'id'
           WHEN EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'organization_id' AND NOT a.attisdropped)
           THEN 'organization_id' END AS tenant_column,
      c.relrowsecurity AS rls, c.relforcerowsecurity AS force,
      ${rolesExist ? `CASE WHEN c.relkind = 'S' THEN ${privileges(APP_ROLE, 'sequence')} ELSE ${privileges(APP_ROLE, 'table')} END` : 'NULL'} AS app,
      ${rolesExist ? `CASE WHEN c.relkind = 'S' THEN ${privileges(PLATFORM_ROLE, 'sequence')} ELSE ${privileges(PLATFORM_ROLE, 'table')} END` : 'NULL'} AS platform,
      p.qual, p.with_check, p.policyname IS NOT NULL AS has_policy
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
    LEFT JOIN pg_policies p ON p.schemaname = 'public' AND p.tablename = c.relname AND p.policyname = 'tenant_isolation'
    WHERE c.relkind IN ('r', 'p', 'S')
    ORDER BY c.relname`);
  const out: string[] = [];
  const [schema] = await q.rows<{ app: boolean | null; platform: boolean | null; log: boolean | null }>(`
    SELECT ${rolesExist ? `has_schema_privilege('${APP_ROLE}', 'public', 'USAGE')` : 'NULL'} AS app,
           ${rolesExist ? `has_schema_privilege('${PLATFORM_ROLE}', 'public', 'USAGE')` : 'NULL'} AS platform,
           CASE WHEN to_regclass('drizzle.__drizzle_migrations') IS NULL THEN true
                ELSE has_table_privilege('public', 'drizzle.__drizzle_migrations', 'SELECT') END AS log`);
  if (!schema?.app) out.push(`GRANT USAGE ON SCHEMA public TO ${APP_ROLE}`);
  if (!schema?.platform) out.push(`GRANT USAGE ON SCHEMA public TO ${PLATFORM_ROLE}`);
  // Any process may check whether the schema is current (a service role that cannot migrate included).
  if (!schema?.log) {
    out.push('GRANT USAGE ON SCHEMA drizzle TO PUBLIC', 'GRANT SELECT ON drizzle.__drizzle_migrations TO PUBLIC');
  }
  for (const t of tables) {
    const table = `"${t.name}"`;
    const has = (list: string[] | null, p: string) => (list ?? []).includes(p);
    if (t.kind === 'S') {
      for (const role of [APP_ROLE, PLATFORM_ROLE]) {
        const list = role === APP_ROLE ? t.app : t.platform;
        if (!has(list, 'USAGE') || !has(list, 'SELECT'))
          out.push(`GRANT USAGE, SELECT ON SEQUENCE ${table} TO ${role}`);
      }
      continue;
    }
    const missingPlatform = DML.filter((p) => !has(t.platform, p));
    if (missingPlatform.length > 0) out.push(`GRANT ${missingPlatform.join(', ')} ON ${table} TO ${PLATFORM_ROLE}`);
    const appWants: readonly string[] = PLATFORM_ONLY_TABLES.has(t.name) ? [] : DML;
    const grant = appWants.filter((p) => !has(t.app, p));
    const revoke = (t.app ?? []).filter((p) => !appWants.includes(p));
    if (grant.length > 0) out.push(`GRANT ${grant.join(', ')} ON ${table} TO ${APP_ROLE}`);
    if (revoke.length > 0) out.push(`REVOKE ${revoke.join(', ')} ON ${table} FROM ${APP_ROLE}`);
    if (!t.tenant_column) continue;
    const check = TENANT_CHECK(t.tenant_column);
    if (!t.rls) out.push(`ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`);
    const force = !RLS_NOT_FORCED_TABLES.has(t.name);
    if (t.force !== force) out.push(`ALTER TABLE ${table} ${force ? '' : 'NO '}FORCE ROW LEVEL SECURITY`);
    if (!t.has_policy) {
      out.push(`CREATE POLICY tenant_isolation ON ${table} USING ${check} WITH CHECK ${check}`);
    } else if (t.qual !== check || t.with_check !== check) {
      out.push(`ALTER POLICY tenant_isolation ON ${table} USING ${check} WITH CHECK ${check}`);
    }
  }
  return out;
}
