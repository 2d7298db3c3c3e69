import { and, desc, eq, isNotNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { members, sessions } from '../../db/schema/index.js';
import { asPlatform } from '../cross-tenant.js';
import { bumpAuthGenerationAsPlatform } from './revocations.js';

/**
 * Makes `organizationId` the session's active organization. Sessions belong to
 * authentication (Better Auth writes them); creating an organization, switching to one and
 * accepting an invitation move the session through here. updatedAt too: the next sign-in
 * starts in the organization activated last (better-auth.ts).
 */
export async function setActiveOrganization(db: Db, sessionId: string, organizationId: string) {
  await asPlatform(db, async (tx) => {
    const switched = await tx
      .update(sessions)
      .set({ activeOrganizationId: organizationId, updatedAt: new Date() })
      .where(and(eq(sessions.id, sessionId), sql`${sessions.activeOrganizationId} IS DISTINCT FROM ${organizationId}`))
      .returning({ id: sessions.id });
    // A switch changes what the session may do: announced with it (revocations.ts).
    if (switched.length > 0) await bumpAuthGenerationAsPlatform(tx);
  });
}

/**
 * The organization a new session starts in: the one active in the user's most recently
 * used session, if they are still a member; otherwise the one they joined first. Platform
 * lookups across tenants, on Better Auth's platform-role handle (`database.platformDb`).
 */
export async function lastOrganizationOf(db: Db, userId: string): Promise<string | undefined> {
  const [recent] = await db
    .select({ organizationId: members.organizationId })
    .from(sessions)
    .innerJoin(
      members,
      and(eq(members.organizationId, sessions.activeOrganizationId), eq(members.userId, sessions.userId)),
    )
    .where(and(eq(sessions.userId, userId), isNotNull(sessions.activeOrganizationId)))
    .orderBy(desc(sessions.updatedAt))
    .limit(1);
  if (recent) return recent.organizationId;
  const [first] = await db
    .select({ organizationId: members.organizationId })
    .from(members)
    .where(eq(members.userId, userId))
    .orderBy(members.createdAt, members.id)
    .limit(1);
  return first?.organizationId;
}
