import { and, eq, isNull } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { deviceTokens, members, organizations } from '../../db/schema/index.js';
import { asPlatform } from '../cross-tenant.js';
import { withTenant } from '../tenancy.js';

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
  const [row] = await asPlatform(db, (tx) =>
    tx
      .select({
        id: deviceTokens.id,
        organizationId: deviceTokens.organizationId,
        userId: members.userId,
        role: members.role,
        plan: organizations.plan,
      })
      .from(deviceTokens)
      .innerJoin(
        members,
        and(eq(members.organizationId, deviceTokens.organizationId), eq(members.id, deviceTokens.memberId)),
      )
      .innerJoin(organizations, eq(organizations.id, deviceTokens.organizationId))
      .where(and(eq(deviceTokens.tokenHash, tokenHash), isNull(deviceTokens.revokedAt)))
      .limit(1),
  );
  if (!row) return undefined;
  const deviceId = row.id;
  void withTenant(db, row.organizationId, (tx) =>
    tx
      .update(deviceTokens)
      .set({ lastUsedAt: new Date() })
      .where(and(eq(deviceTokens.organizationId, row.organizationId), eq(deviceTokens.id, deviceId))),
  ).catch(() => {});
  return row;
}
