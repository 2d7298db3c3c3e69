import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { sessions } from '../../db/schema/index.js';
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
