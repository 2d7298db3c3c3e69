import { and, eq, isNull, lt, or } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { deviceTokens, members, organizations } from '../../db/schema/index.js';
import { asPlatform } from '../cross-tenant.js';
import { withTenant } from '../tenancy.js';
import { organizationOfSecret } from './secret-lookups.js';

/**
 * Cross-tenant lookup: a device token (`dev_…`) is presented before any tenant is
 * known; its hash is what tells us the organization, so this one query runs
 * outside a tenant context (like API keys in principal.ts). It belongs to authentication,
 * not to crew tracking (which issues and revokes the tokens): the principal resolver needs it
 * before any module runs. It joins
 * the member, so a device stops working the moment its member leaves, and takes
 * the member's current role (a device acts with its member's role).
 */
export async function resolveDeviceToken(db: Db, tokenHash: string) {
  const row = await asPlatform(db, async (tx) => {
    // The global lookup table names the organization, then the token is read within it
    // (operations.md §13); a mapping whose token is gone finds nothing (401).
    const organizationId = await organizationOfSecret(tx, 'device_token', tokenHash);
    if (organizationId === undefined) return undefined;
    const [found] = await tx
      .select({
        id: deviceTokens.id,
        organizationId: deviceTokens.organizationId,
        userId: members.userId,
        role: members.role,
        plan: organizations.plan,
        lastUsedAt: deviceTokens.lastUsedAt,
      })
      .from(deviceTokens)
      .innerJoin(
        members,
        and(eq(members.organizationId, deviceTokens.organizationId), eq(members.id, deviceTokens.memberId)),
      )
      .innerJoin(organizations, eq(organizations.id, deviceTokens.organizationId))
      .where(
        and(
          eq(deviceTokens.organizationId, organizationId),
          eq(deviceTokens.tokenHash, tokenHash),
          isNull(deviceTokens.revokedAt),
        ),
      )
      .limit(1);
    return found;
  });
  if (!row) return undefined;
  const { lastUsedAt, ...device } = row;
  const now = Date.now();
  if (lastUsedAt === null || now - lastUsedAt.getTime() >= LAST_USED_STEP_MS) {
    const stale = new Date(now - LAST_USED_STEP_MS);
    void withTenant(db, row.organizationId, (tx) =>
      tx
        .update(deviceTokens)
        .set({ lastUsedAt: new Date(now) })
        .where(
          and(
            eq(deviceTokens.organizationId, row.organizationId),
            eq(deviceTokens.id, row.id),
            // Another request of the same phone may have moved it in the meantime.
            or(isNull(deviceTokens.lastUsedAt), lt(deviceTokens.lastUsedAt, stale)),
          ),
        ),
    ).catch(() => {});
  }
  return device;
}

/**
 * `lastUsedAt` is kept to the minute: a phone posting its GPS batches wrote the same row at
 * every request, a transaction of two round trips of its own, and its concurrent requests queued
 * on that row's lock (bench/parts/crew-tracking.ts: ten connections of one device token).
 */
const LAST_USED_STEP_MS = 60_000;
