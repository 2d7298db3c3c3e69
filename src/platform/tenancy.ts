import { sql } from 'drizzle-orm';
import type { Db, Tx } from '../db/client.js';
import { APP_ROLE } from '../db/migrate.js';

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
}

/**
 * Runs `fn` in one transaction, as the application role, with the tenant set for
 * this transaction only. Row-level security then hides and refuses every row of
 * another organization even if a query forgot its `organization_id` filter.
 * Everything `fn` writes, including outbox events, commits or rolls back together.
 */
export async function withTenant<T>(db: Db, organizationId: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.execute(
      sql`SELECT set_config('role', ${APP_ROLE}, true), set_config('app.organization_id', ${organizationId}, true)`,
    );
    return fn(tx);
  });
}

/** Convenience: build a Ctx inside withTenant. */
export function inTenant<T>(db: Db, organizationId: string, actor: Actor, fn: (ctx: Ctx) => Promise<T>): Promise<T> {
  return withTenant(db, organizationId, (tx) => fn({ tx, organizationId, actor }));
}
