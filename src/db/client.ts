import { copyFileSync, cpSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import pg from 'pg';
import { type DataDirLock, lockDataDir } from './data-dir-lock.js';
import {
  ownedClientTransaction,
  type PoolTransactionParts,
  poolTransactionParts,
  transactionOnClient,
} from './drizzle-adapter.js';
import { PgliteClient } from './pglite-client.js';
import { RolePool } from './role-pool.js';
import * as schema from './schema/index.js';

/** The role of cross-tenant platform code (see src/db/migrate.ts); named here to avoid an import cycle. */
export const PLATFORM_ROLE = 'crm_platform';

export type Schema = typeof schema;
/** The Drizzle handle, identical in use on PostgreSQL (pg Pool) and on PGlite. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;

export interface Database {
  kind: 'postgres' | 'pglite';
  db: Db;
  /** Raw SQL for platform code (migrations, LISTEN). */
  pool: pg.Pool | undefined;
  pglite: PGlite | undefined;
  /** The client Drizzle runs on over `pglite` (src/db/pglite-client.ts): fewer engine calls, a faster reader. */
  pgliteClient: PgliteClient | undefined;
  /**
   * A handle whose every statement and transaction runs as the platform role (BYPASSRLS),
   * switched per transaction (never per connection), for a library that needs a handle rather
   * than a callback: Better Auth. Own code uses `asPlatform`, or
   * `asPlatformStatement` for one statement in one round trip (src/platform/cross-tenant.ts).
   * On PGlite, the same handle as `db`.
   */
  platformDb: Db;
  /**
   * One statement as the platform role, without Drizzle, rows as arrays of column values:
   * on PostgreSQL one round trip that switches the role inside the statement's own implicit
   * transaction (src/db/role-pool.ts). Nothing is prepared under a name: behind PgBouncer in
   * transaction pooling a named statement meets server connections that never saw it or that
   * another client prepared it on. For the webhook worker's claim and result calls, hundreds a
   * second under load, where building and parsing through the query builder cost more than
   * the call itself.
   */
  platformQuery(statement: Statement, values: unknown[]): Promise<unknown[][]>;
  close(): Promise<void>;
}

/** One statement's text, `$1`… for its values. */
export interface Statement {
  text: string;
}

export interface OpenOptions {
  databaseUrl?: string | undefined;
  dataDir?: string;
  /** An existing PGlite instance (tests clone a migrated template). */
  pglite?: PGlite;
  poolMax?: number;
  /**
   * How long a query waits for a connection (opening one, or a free one in the pool)
   * before failing: the service's DATABASE_CONNECT_TIMEOUT, so that requests fail fast
   * (503) while PostgreSQL is unreachable instead of hanging. Unset: no limit.
   */
  connectTimeoutMs?: number;
}

export async function openDatabase(opts: OpenOptions): Promise<Database> {
  if (opts.databaseUrl) {
    const connectionTimeoutMillis = opts.connectTimeoutMs ?? 0;
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: opts.poolMax ?? 10, connectionTimeoutMillis });
    // An idle client that loses its server emits 'error'; without a listener that kills the process.
    pool.on('error', () => {});
    // A checked-out client (inside a transaction, between statements) that loses its
    // server emits 'error' too, where the pool has no listener; the failing query
    // still rejects, so this listener only stops an uncaught exception.
    pool.on('connect', (client) => client.on('error', () => {}));
    const db: Db = drizzlePg({ client: pool, schema });
    db.transaction = ownedClientTransaction(pool) as Db['transaction'];
    // Connects lazily: a process that never signs anyone in opens no such connection. Its role
    // is switched inside each statement's or transaction's own transaction (src/db/role-pool.ts):
    // a startup `-c role=` would be dropped by PgBouncer, leaving the login role.
    const platformPool = new RolePool(
      { connectionString: opts.databaseUrl, max: Math.min(opts.poolMax ?? 10, 4), connectionTimeoutMillis },
      PLATFORM_ROLE,
    );
    platformPool.on('error', () => {});
    platformPool.on('connect', (client) => client.on('error', () => {}));
    const platformDb: Db = drizzlePg({ client: platformPool, schema });
    const parts = poolTransactionParts(platformDb) as PoolTransactionParts;
    platformDb.transaction = (async (fn: (tx: Tx) => Promise<unknown>, config?: unknown) => {
      if (config) throw new Error('platformDb.transaction takes no transaction config');
      return platformPool.transactionAsRole((client) => fn(transactionOnClient(parts, client)));
    }) as Db['transaction'];
    return {
      kind: 'postgres',
      db,
      pool,
      pglite: undefined,
      pgliteClient: undefined,
      platformDb,
      platformQuery: async (statement, values) =>
        (await platformPool.query({ text: statement.text, values, rowMode: 'array' })).rows as unknown[][],
      close: async () => {
        await Promise.all([pool.end(), platformPool.end()]);
      },
    };
  }
  let client = opts.pglite;
  let lock: DataDirLock | undefined;
  if (!client) {
    const dir = opts.dataDir ?? './data';
    if (!dir.startsWith('memory://')) {
      mkdirSync(dir, { recursive: true });
      // One process per data directory: a second one refuses here, before touching a file.
      lock = await lockDataDir(dir);
      fromTemplate(dir);
    }
    try {
      client = await PGlite.create(dir, { extensions: { pg_trgm } });
    } catch (err) {
      lock?.release();
      throw err;
    }
  }
  const owned = client;
  const fast = new PgliteClient(owned);
  // PGlite's query results have a type of their own; own code reads raw results through rowsOf.
  // Drizzle's PGlite driver calls only query and transaction, which PgliteClient answers as PGlite does.
  const db = drizzlePglite({ client: fast as unknown as PGlite, schema }) as Db;
  return {
    kind: 'pglite',
    db,
    pool: undefined,
    pglite: owned,
    pgliteClient: fast,
    platformDb: db,
    platformQuery: async (statement, values) =>
      (await fast.query<unknown[]>(statement.text, values, { rowMode: 'array' })).rows,
    close: async () => {
      if (!owned.closed) await owned.close();
      lock?.release();
    },
  };
}

/** Made by scripts/build.mjs beside the compiled code (dist/pglite-template); absent when run from the sources. */
const TEMPLATE = fileURLToPath(new URL('../pglite-template', import.meta.url));

/**
 * An empty data directory (no PG_VERSION) starts as a copy of the migrated template: the first
 * start then skips initdb and the migrations, which cost seconds of CPU in WebAssembly; migrate
 * still runs after and applies whatever the template lacks. PG_VERSION is copied last, so a copy
 * cut short is taken for empty again and copied anew, never opened half-made. Holding the lock.
 */
function fromTemplate(dir: string): void {
  if (existsSync(join(dir, 'PG_VERSION')) || !existsSync(join(TEMPLATE, 'PG_VERSION'))) return;
  const skipped = new Set(['PG_VERSION', '.template-stamp', '.lock.sock'].map((name) => join(TEMPLATE, name)));
  cpSync(TEMPLATE, dir, { recursive: true, filter: (source) => !skipped.has(source) });
  copyFileSync(join(TEMPLATE, 'PG_VERSION'), join(dir, 'PG_VERSION'));
}

/**
 * How many rows a raw `db.execute(sql…)` INSERT, UPDATE or DELETE wrote (its command tag; rows
 * skipped by ON CONFLICT DO NOTHING are not counted): node-postgres says `rowCount`, PGlite
 * `affectedRows`. Cheaper than `RETURNING 1`, whose rows the driver reads one by one.
 */
export function affectedRowsOf(result: unknown): number {
  const r = result as { rowCount?: number | null; affectedRows?: number };
  return r.rowCount ?? r.affectedRows ?? 0;
}

/** The rows of a raw `db.execute(sql…)` result; both drivers return `{ rows }`. */
export function rowsOf<T>(result: unknown): T[] {
  return (result as { rows: T[] }).rows;
}
