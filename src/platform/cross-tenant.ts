import type { Database, Db, Tx } from '../db/client.js';
import { PLATFORM_ROLE } from '../db/client.js';
import { type Actor, type Ctx, inTenant, transactionAs } from './tenancy.js';

/**
 * THE way to read or write across organizations. Use it only when the tenant is not
 * known yet or the work spans tenants:
 *  - resolving a credential to its tenant (API key by hash, portal token, invitation,
 *    a device token by hash, a Stripe webhook routed by the organization id in its URL);
 *  - a user's own rows that precede a tenant (memberships, sessions' active organization,
 *    creating an organization);
 *  - worker fan-out and sweeps over every organization (outbox dispatch, delivery
 *    claims, due contracts, overdue invoices);
 *  - operator commands (`npm run admin`).
 * Everything else runs in a tenant transaction (`inTenant` / `inRequestTenant`),
 * where row-level security is the second wall between tenants.
 *
 * `fn` runs in one transaction as the `crm_platform` role, which has BYPASSRLS and
 * DML on every table, credentials included; so name the organization in every query
 * you write here, keep the function narrow, and once the tenant is known switch to
 * `inTenant` for the tenant's own work. The service's login role itself has no table
 * privileges: a query outside `asPlatform`/`withTenant` fails on PostgreSQL.
 *
 * Better Auth, which needs a handle rather than a callback, uses `database.platformDb`
 * (the same role, switched inside each of its statements' transactions); so does
 * `asPlatformStatement` below; nothing else should.
 */
export function asPlatform<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return transactionAs(db, { role: PLATFORM_ROLE }, fn);
}

/**
 * `asPlatform` for work that is ONE statement (a CTE chain counts as one): it runs on
 * `database.platformDb`, which sends the role switch and the statement as one message, one
 * implicit transaction, with no BEGIN / COMMIT around it; a single statement is atomic on its
 * own, so the guarantees are the same in one round trip instead of three. For the webhook
 * worker's result writes one by one (its batched claims and results go the same way:
 * Database.platformQuery). `fn` must send exactly one statement: two would commit separately.
 */
export function asPlatformStatement<T>(database: Pick<Database, 'platformDb'>, fn: (db: Db) => Promise<T>): Promise<T> {
  return fn(database.platformDb);
}

/**
 * The second half of a worker's fan-out: the due rows a cross-tenant query found,
 * handled per organization, each in its own tenant transaction (row-level security on)
 * with the ids of its rows. Answers the sum of what `fn` handled.
 */
export async function perOrganization(
  db: Db,
  due: Array<{ id: string; organization_id: string }>,
  actor: Actor,
  fn: (ctx: Ctx, ids: string[]) => Promise<number>,
): Promise<number> {
  const byOrg = new Map<string, string[]>();
  for (const r of due) byOrg.set(r.organization_id, [...(byOrg.get(r.organization_id) ?? []), r.id]);
  let handled = 0;
  for (const [organizationId, ids] of byOrg)
    handled += await inTenant(db, organizationId, actor, (ctx) => fn(ctx, ids));
  return handled;
}
