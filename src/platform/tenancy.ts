import { sql } from 'drizzle-orm';
import type { Db, Tx } from '../db/client.js';
import { poolTransactionParts, transactionOnClient } from '../db/drizzle-adapter.js';
import { APP_ROLE } from '../db/migrate.js';
import { releaseClient, transactionOn } from '../db/pg-transaction.js';

/** Who is acting: a signed-in user or an API key, inside one organization. */
export type Role = 'owner' | 'admin' | 'member';

export interface Actor {
  /** `portal`: the customer, acting through a document link (no user); `system`: a worker task. */
  kind: 'user' | 'apiKey' | 'portal' | 'system';
  /** User id, API key id, or the portal token's id. */
  id: string;
  role: Role;
}

/** What every service function receives: the transaction, the tenant and the actor. */
export interface Ctx {
  tx: Tx;
  organizationId: string;
  actor: Actor;
  /**
   * Depth of the events this context emits (workflow loop guard, operations.md §7):
   * absent = 0 (a user or API call); a workflow run sets its trigger's depth + 1.
   */
  eventDepth?: number;
}

/**
 * Runs `fn` in one transaction, as the application role, with the tenant set for
 * this transaction only. Row-level security then hides and refuses every row of
 * another organization even if a query forgot its `organization_id` filter.
 * Everything `fn` writes, including outbox events, commits or rolls back together.
 */
export async function withTenant<T>(db: Db, organizationId: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if (!SAFE_ID.test(organizationId)) throw new Error('Malformed organization id');
  return transactionAs(db, { role: APP_ROLE, 'app.organization_id': organizationId }, fn);
}

/** Organization ids are generated (`org_` + base36); anything else never reaches SQL text. */
const SAFE_ID = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * One transaction with transaction-local settings (`role` and the tenant), shared by
 * `withTenant` and `asPlatform`. On a pg Pool BEGIN and the settings travel as one
 * simple-protocol message instead of two (measured: per-request round trips dominate
 * a small read, bench/parts/customers.ts), through src/db/drizzle-adapter.ts. Mirrors
 * Drizzle's own NodePgSession.transaction otherwise (savepoints for nested transactions, rollback
 * on error, client released). Setting values are constants or SAFE_ID-checked.
 *
 * On PostgreSQL the settings are `SET LOCAL` statements, not `set_config(…, true)` (the same
 * effect): on Citus (docs/scaling.md) `SET LOCAL` is what the coordinator passes on to the
 * workers that hold the shards (with `citus.propagate_set_commands = 'local'`), so the tenant
 * policy sees the organization there too; a `set_config` stays on the coordinator and the
 * workers' policy would hide every row. Embedded PGlite sends one statement per query: one SELECT.
 */
export async function transactionAs<T>(
  db: Db,
  settings: Record<string, string>,
  fn: (tx: Tx) => Promise<T>,
): Promise<T> {
  const parts = poolTransactionParts(db);
  if (!parts) {
    const assignments = Object.entries(settings)
      .map(([name, value]) => `set_config('${name}', '${value}', true)`)
      .join(', ');
    return db.transaction(async (tx) => {
      await tx.execute(sql.raw(`SELECT ${assignments}`));
      return fn(tx);
    });
  }
  const begin = ['BEGIN', ...Object.entries(settings).map(([name, value]) => `SET LOCAL ${name} = '${value}'`)].join(
    '; ',
  );
  const client = await parts.pool.connect();
  try {
    return await transactionOn(client, () => fn(transactionOnClient(parts, client)), begin);
  } finally {
    // A connection whose ROLLBACK failed is not handed to the next request.
    releaseClient(client);
  }
}

/** Convenience: build a Ctx inside withTenant. */
export function inTenant<T>(db: Db, organizationId: string, actor: Actor, fn: (ctx: Ctx) => Promise<T>): Promise<T> {
  return withTenant(db, organizationId, (tx) => fn({ tx, organizationId, actor }));
}

/** The one actor of background work: `kind: 'system'`, named by the task that acts (e.g. `contracts.lifecycle`). */
export function systemActor(task: string): Actor {
  return { kind: 'system', id: task, role: 'owner' };
}
