import { createHash } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
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
 * outlives a revocation.
 */

/** SHA-256 (hex) of a secret: what is stored, in the tenant table and here. */
export const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** Maps a new secret to its organization, in the transaction that stores the secret. */
export async function recordSecret(tx: Tx, kind: SecretKind, hash: string, organizationId: string): Promise<void> {
  await tx.insert(secretLookups).values({ kind, hash, organizationId });
}

/** Drops the mapping of a revoked secret, in the revoking transaction. */
export async function forgetSecret(tx: Tx, kind: SecretKind, hash: string): Promise<void> {
  await tx.delete(secretLookups).where(and(eq(secretLookups.kind, kind), eq(secretLookups.hash, hash)));
}

/**
 * The organization a secret belongs to, or undefined. Cross-tenant: call it inside
 * `asPlatform`, then read the tenant table with `organization_id =` the answer (a mapping
 * whose row is gone then finds nothing, which the caller answers as an unknown secret).
 */
export async function organizationOfSecret(tx: Tx, kind: SecretKind, hash: string): Promise<string | undefined> {
  const [row] = await tx
    .select({ organizationId: secretLookups.organizationId })
    .from(secretLookups)
    .where(and(eq(secretLookups.kind, kind), eq(secretLookups.hash, hash)))
    .limit(1);
  return row?.organizationId;
}
