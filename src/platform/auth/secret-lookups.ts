import { createHash } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { type SecretKind, secretLookups } from '../../db/schema/index.js';

/**
 * The global `hash → organization_id` table of secrets that arrive without an organization
 * (operations.md §13; drizzle/0036_secret_lookups.sql). A resolver reads it first, then the
 * tenant table filtered by the organization it names, so that once tenant tables are
 * distributed by organization (docs/scaling.md) a lookup by secret reads one shard, never all.
 *
 * Only this file writes it. The modules that issue and revoke secrets (API keys, crew devices,
 * portal links) call `recordSecret` / `forgetSecret` with their own tenant transaction, so the
 * mapping commits or rolls back with the secret: no key without its mapping, no mapping that
 * outlives a revocation. The table is global (not keyed by organization: it is read before the
 * organization is known), so its organization column is `tenant_id` and the application role
 * reaches it only through two SQL functions bound to the transaction's organization.
 */

/** SHA-256 (hex) of a secret: what is stored, in the tenant table and here. */
export const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

/**
 * Maps a new secret to the organization of the tenant transaction `tx` (its `app.organization_id`),
 * in the transaction that stores the secret. Through a SQL function: the application role has no
 * privilege on the table itself, so a tenant maps only its own secrets and reads no mapping.
 */
export async function recordSecret(tx: Tx, kind: SecretKind, hash: string): Promise<void> {
  await tx.execute(sql`SELECT secret_lookup_record(${kind}, ${hash})`);
}

/** Drops the mapping of a revoked secret of the transaction's organization, in the revoking transaction. */
export async function forgetSecret(tx: Tx, kind: SecretKind, hash: string): Promise<void> {
  await tx.execute(sql`SELECT secret_lookup_forget(${kind}, ${hash})`);
}

/**
 * The organization a secret belongs to, or undefined. Cross-tenant: call it inside
 * `asPlatform`, then read the tenant table with `organization_id =` the answer (a mapping
 * whose row is gone then finds nothing, which the caller answers as an unknown secret).
 */
export async function organizationOfSecret(tx: Tx, kind: SecretKind, hash: string): Promise<string | undefined> {
  const [row] = await tx
    .select({ organizationId: secretLookups.tenantId })
    .from(secretLookups)
    .where(and(eq(secretLookups.kind, kind), eq(secretLookups.hash, hash)))
    .limit(1);
  return row?.organizationId;
}
