import { eq } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { quickbooksConnections } from '../../db/schema/index.js';
import { inTenant } from '../../platform/tenancy.js';
import { SYNC_ACTOR } from './quickbooks.actor.js';
import type { SyncDeps } from './quickbooks.deps.js';
import { intuitRefusal, refreshTokens } from './quickbooks.oauth.js';

/* The connection as the sync uses it: the access token, and its refresh under a lock across processes. */

export interface Connection {
  organizationId: string;
  realmId: string;
  accessToken: string;
  generation: number;
  expiresAt: Date;
}

export async function readConnection(
  database: Database,
  deps: SyncDeps,
  organizationId: string,
): Promise<Connection | null> {
  const [row] = await inTenant(database.db, organizationId, SYNC_ACTOR, (ctx) =>
    ctx.tx.select().from(quickbooksConnections).where(eq(quickbooksConnections.organizationId, organizationId)),
  );
  if (row?.status !== 'connected') return null;
  return {
    organizationId,
    realmId: row.realmId,
    accessToken: deps.box.open(row.accessTokenSealed),
    generation: row.tokenGeneration,
    expiresAt: row.accessExpiresAt,
  };
}

/**
 * A fresh access token, refreshed under the connection row's lock (FOR UPDATE, held across the
 * call to Intuit): of two processes that saw the same expired token, the second finds the
 * generation moved on and uses the first one's token, so the rotated refresh token is used once.
 * Intuit refusing the refresh token (revoked, expired) puts the connection in `error`.
 */
export async function refreshed(database: Database, deps: SyncDeps, seen: Connection): Promise<Connection | null> {
  return inTenant(database.db, seen.organizationId, SYNC_ACTOR, async (ctx) => {
    const [row] = await ctx.tx
      .select()
      .from(quickbooksConnections)
      .where(eq(quickbooksConnections.organizationId, seen.organizationId))
      .for('update');
    if (row?.status !== 'connected') return null;
    const current = {
      organizationId: seen.organizationId,
      realmId: row.realmId,
      accessToken: deps.box.open(row.accessTokenSealed),
      generation: row.tokenGeneration,
      expiresAt: row.accessExpiresAt,
    };
    if (row.tokenGeneration !== seen.generation) return current;
    let tokens: Awaited<ReturnType<typeof refreshTokens>>;
    try {
      tokens = await refreshTokens(deps.config, deps.box.open(row.refreshTokenSealed));
    } catch (err) {
      const status = Number(
        (err as { authResponse?: { response?: { status?: number } } })?.authResponse?.response?.status,
      );
      const refusal = intuitRefusal(err);
      if (status === 400 || status === 401 || /invalid_grant/.test(refusal)) {
        await ctx.tx
          .update(quickbooksConnections)
          .set({
            status: 'error',
            lastError: `QuickBooks refused the refresh token (${refusal}): connect again`,
            updatedAt: new Date(),
          })
          .where(eq(quickbooksConnections.organizationId, seen.organizationId));
        return null;
      }
      throw new Error(`QuickBooks' token endpoint failed (${refusal})`);
    }
    await ctx.tx
      .update(quickbooksConnections)
      .set({
        accessTokenSealed: deps.box.seal(tokens.accessToken),
        refreshTokenSealed: deps.box.seal(tokens.refreshToken),
        accessExpiresAt: tokens.accessExpiresAt,
        refreshExpiresAt: tokens.refreshExpiresAt,
        tokenGeneration: row.tokenGeneration + 1,
        updatedAt: new Date(),
      })
      .where(eq(quickbooksConnections.organizationId, seen.organizationId));
    return {
      ...current,
      accessToken: tokens.accessToken,
      generation: row.tokenGeneration + 1,
      expiresAt: tokens.accessExpiresAt,
    };
  });
}
