import type { ExtractTablesWithRelations, RelationalSchemaConfig } from 'drizzle-orm';
import {
  drizzle as drizzlePg,
  NodePgSession,
  type NodePgSessionOptions,
  NodePgTransaction,
} from 'drizzle-orm/node-postgres';
import type { PgDialect } from 'drizzle-orm/pg-core';
import { PgliteSession, PgliteTransaction } from 'drizzle-orm/pglite';
import pg from 'pg';
import type { Db, Schema, Tx } from './client.js';
import { PgliteClient, type PgliteTx } from './pglite-client.js';
import * as schema from './schema/index.js';

/*
 * THE one place that leans on drizzle-orm internals, for two measured work-arounds:
 *  - `poolTransactionParts` + `transactionOnClient`: tenancy.ts runs BEGIN and the
 *    transaction settings as one round trip on a client it checked out itself, then
 *    hands Drizzle a transaction bound to that client (bench/parts/customers.ts);
 *  - `ownedClientTransaction`: a Pool transaction whose client is always released,
 *    even when BEGIN fails (drizzle-orm 0.45 leaks it: a few outages exhaust the pool);
 *  - `arrayRows`: one statement on a transaction's own connection, rows as arrays, for a
 *    large read where Drizzle's per-column mapping costs more than the query (the jobs calendar);
 *  - `pgliteTransaction`: on PGlite, a transaction whose settings travel with its first
 *    statement (src/db/pglite-client.ts), with Drizzle's transaction bound to it.
 * What they rely on (a NodePgSession's or PgliteSession's `client`, `dialect`, `schema`, `options`
 * fields and the NodePgSession/NodePgTransaction/PgliteSession/PgliteTransaction constructors) is not public API:
 * test/platform/drizzle-adapter.test.ts fails loudly when an upgrade changes it.
 */

/** The drizzle-orm version these work-arounds were checked against (the adapter test compares). */
export const VERIFIED_DRIZZLE_VERSION = '0.45.4';

export interface PoolTransactionParts {
  pool: pg.Pool;
  dialect: PgDialect;
  schema: RelationalSchemaConfig<ExtractTablesWithRelations<Schema>> | undefined;
  options: NodePgSessionOptions;
}

/** The parts of a Drizzle handle over a pg Pool; undefined for any other driver (PGlite). */
export function poolTransactionParts(db: Db): PoolTransactionParts | undefined {
  const session = db._.session;
  if (!(session instanceof NodePgSession)) return undefined;
  const internals = session as unknown as {
    client: unknown;
    dialect: PgDialect;
    schema: PoolTransactionParts['schema'];
    options: NodePgSessionOptions;
  };
  if (!(internals.client instanceof pg.Pool)) return undefined;
  return { pool: internals.client, dialect: internals.dialect, schema: internals.schema, options: internals.options };
}

/** A Drizzle transaction handle on a client already inside BEGIN (the caller commits or rolls back). */
export function transactionOnClient(parts: PoolTransactionParts, client: pg.PoolClient): Tx {
  const session = new NodePgSession(client, parts.dialect, parts.schema, parts.options);
  // No schema for the handle itself: with one, Drizzle builds a relational query builder
  // (`tx.query.<table>`) for every table of the schema at each transaction, which no code here
  // uses (it selects through the query builder); that construction was 1.6 % of a page
  // request's CPU in the customers bench, once per request.
  const tx: Tx = new NodePgTransaction(parts.dialect, session, undefined);
  return tx;
}

/**
 * drizzle-orm 0.45's Pool transaction sends BEGIN before its try/finally, so a BEGIN
 * that fails on a dropped connection never returns the client to the pool: a few
 * database outages exhaust the pool and every request (and the worker) then hangs.
 * Here the client is checked out by us and always released, and discarded on error.
 */
export function ownedClientTransaction(pool: pg.Pool) {
  return async <T>(fn: (tx: Tx) => Promise<T>, config?: Parameters<Db['transaction']>[1]): Promise<T> => {
    const client = await pool.connect();
    let failure: Error | undefined;
    try {
      const db: Db = drizzlePg({ client, schema });
      return await db.transaction(fn, config);
    } catch (err) {
      failure = err instanceof Error ? err : new Error(String(err));
      throw err;
    } finally {
      client.release(failure);
    }
  };
}

/** The driver under a Drizzle transaction: a pg client (or pool), or a PGlite transaction. */
interface PgDriver {
  query(config: { text: string; values: unknown[]; rowMode: 'array' }): Promise<{ rows: unknown[][] }>;
}
interface PgliteDriver {
  query(text: string, values: unknown[], options: { rowMode: 'array' }): Promise<{ rows: unknown[][] }>;
}

/**
 * `text` with `$n` values run on the connection (and inside the transaction) of `tx`, rows as
 * arrays of column values in select-list order, parsed by the driver's own default types (not
 * Drizzle's): so a statement read this way casts in SQL what must not depend on the driver
 * (dates and timestamps as text, bigint as float8; text[] and jsonb parse alike on both).
 */
export async function arrayRows(tx: Tx, text: string, values: unknown[]): Promise<unknown[][]> {
  const session: unknown = tx._.session;
  const client = (session as { client: unknown }).client;
  if (session instanceof NodePgSession) {
    return (await (client as PgDriver).query({ text, values, rowMode: 'array' })).rows;
  }
  if (session instanceof PgliteSession) {
    return (await (client as PgliteDriver).query(text, values, { rowMode: 'array' })).rows;
  }
  throw new Error('arrayRows: not a node-postgres or PGlite transaction');
}

/**
 * Runs `text` (no parameters, no result wanted) on a PGlite transaction's own client in the simple
 * protocol: one Query message, where Drizzle's `execute` sends Parse, Describe, Bind, Describe,
 * Execute and Sync, each a call into the WebAssembly engine, and converts a result nobody reads.
 * Answers false, running nothing, when `tx` is not a PGlite transaction.
 */
export async function execOnPglite(tx: Tx, text: string): Promise<boolean> {
  const session: unknown = tx._.session;
  if (!(session instanceof PgliteSession)) return false;
  await (session as unknown as { client: { exec(text: string): Promise<unknown> } }).client.exec(text);
  return true;
}

/**
 * On PGlite through a PgliteClient (src/db/client.ts): `fn` in one transaction whose BEGIN and
 * `settings` (simple-protocol statements) go with its first statement, as one call into the
 * engine; Drizzle's transaction is bound to it as its own `transaction` would bind it. Answers
 * undefined, running nothing, for any other handle.
 */
export function pgliteTransaction<T>(db: Db, settings: string, fn: (tx: Tx) => Promise<T>): Promise<T> | undefined {
  const session: unknown = db._.session;
  if (!(session instanceof PgliteSession)) return undefined;
  const internals = session as unknown as {
    client: unknown;
    dialect: PgDialect;
    schema: PoolTransactionParts['schema'];
    options: ConstructorParameters<typeof PgliteSession>[3];
  };
  const client = internals.client;
  if (!(client instanceof PgliteClient)) return undefined;
  return client.transaction((txClient: PgliteTx) => {
    const txSession = new PgliteSession(
      txClient as unknown as ConstructorParameters<typeof PgliteSession>[0],
      internals.dialect,
      internals.schema,
      internals.options,
    );
    return fn(new PgliteTransaction(internals.dialect, txSession, internals.schema) as unknown as Tx);
  }, settings);
}
