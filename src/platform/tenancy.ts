import { sql } from 'drizzle-orm';
import type pg from 'pg';
import type { Db, Tx } from '../db/client.js';
import { execOnPglite, pgliteTransaction, poolTransactionParts, transactionOnClient } from '../db/drizzle-adapter.js';
import { APP_ROLE } from '../db/migrate.js';
import { deferredTransactionOn, releaseClient, transactionOn } from '../db/pg-transaction.js';
import { noteCitus } from '../db/values.js';

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
 * `withTenant` and `asPlatform`. On a pg Pool it is a deferred transaction
 * (src/db/pg-transaction.ts, `DeferredTransaction`): each reading statement travels with the
 * settings as one simple-protocol message, its own implicit transaction, until the first
 * statement that may write, which travels with BEGIN and the settings; COMMIT only then. A page
 * that runs one SELECT is one round trip instead of BEGIN / query / COMMIT (measured: per-request
 * round trips dominate a small read, bench/parts/customers.ts counts them at the driver). The
 * Drizzle handle is bound to that connection through src/db/drizzle-adapter.ts. Mirrors
 * Drizzle's own NodePgSession.transaction otherwise (savepoints for nested transactions, rollback
 * on error, client released). Setting values are constants or SAFE_ID-checked.
 *
 * On Citus (docs/scaling.md) the tenant also goes out as a `SET LOCAL` statement of its own:
 * that is what the coordinator passes on to the workers holding the shards (with
 * `citus.propagate_set_commands = 'local'`), where the tenant policy is evaluated too; a
 * `set_config` stays on the coordinator, and the workers' policy would hide every row. Citus
 * passes on the text of the whole message, so the SET cannot ride in another statement's
 * message there: on Citus the transaction is begun at once (BEGIN and the settings in one
 * message, then the SET LOCAL), as before, and not deferred (the role needs none: Citus
 * connects to the workers as the current role).
 */
export async function transactionAs<T>(
  db: Db,
  settings: Record<string, string>,
  fn: (tx: Tx) => Promise<T>,
): Promise<T> {
  const assignments = Object.entries(settings)
    .map(([name, value]) => `set_config('${name}', '${value}', true)`)
    .join(', ');
  const parts = poolTransactionParts(db);
  if (!parts) {
    // PGlite: one transaction at a time in this process; BEGIN and the settings go with the
    // first statement, in the same call into the engine (src/db/pglite-client.ts).
    const lite = pgliteTransaction(db, `SELECT ${assignments}`, fn);
    if (lite) return lite;
    return db.transaction(async (tx) => {
      const text = `SELECT ${assignments}`;
      if (!(await execOnPglite(tx, text))) await tx.execute(sql.raw(text));
      return fn(tx);
    });
  }
  const client = await parts.pool.connect();
  try {
    const tenant = settings['app.organization_id'];
    if (tenant !== undefined && (await isCitus(parts.pool, client))) {
      noteCitus(); // multi-row statements as VALUES lists from now on (src/db/values.ts)
      return await transactionOn(
        client,
        async () => {
          await client.query(`SET LOCAL app.organization_id = '${tenant}'`);
          return fn(transactionOnClient(parts, client));
        },
        `BEGIN; SELECT ${assignments}`,
      );
    }
    return await deferredTransactionOn(client, `SELECT ${assignments}`, (connection) =>
      fn(transactionOnClient(parts, connection as unknown as pg.PoolClient)),
    );
  } finally {
    // A connection whose ROLLBACK failed is not handed to the next request.
    releaseClient(client);
  }
}

/** Whether a pool's database is a Citus coordinator: asked once per pool, on its first tenant transaction. */
const citusPools = new WeakMap<object, Promise<boolean>>();
function isCitus(pool: object, client: { query(text: string): Promise<{ rows: Array<{ citus?: boolean }> }> }) {
  let known = citusPools.get(pool);
  if (!known) {
    known = client
      .query(`SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS citus`)
      .then((r) => r.rows[0]?.citus === true);
    // A failed probe (the database unreachable) is asked again next time, never cached.
    known.catch(() => citusPools.delete(pool));
    citusPools.set(pool, known);
  }
  return known;
}

/** Convenience: build a Ctx inside withTenant. */
export function inTenant<T>(db: Db, organizationId: string, actor: Actor, fn: (ctx: Ctx) => Promise<T>): Promise<T> {
  return withTenant(db, organizationId, (tx) => fn({ tx, organizationId, actor }));
}

/** The one actor of background work: `kind: 'system'`, named by the task that acts (e.g. `contracts.lifecycle`). */
export function systemActor(task: string): Actor {
  return { kind: 'system', id: task, role: 'owner' };
}
