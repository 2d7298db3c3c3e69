import { desc, inArray } from 'drizzle-orm';
import type { Plan } from '../../config.js';
import type { Db, Tx } from '../../db/client.js';
import { organizations } from '../../db/schema/index.js';
import { setActiveOrganization } from '../../platform/auth/sessions.js';
import { asPlatform } from '../../platform/cross-tenant.js';
import { isValidTimeZone } from '../../platform/dates.js';
import { invalidField, notFound } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { withTenant } from '../../platform/tenancy.js';
import { addMember, rolesOfUser } from '../members/members.refs.js';

export interface OrganizationView {
  id: string;
  name: string;
  plan: Plan;
  timezone: string;
  role: 'owner' | 'admin' | 'member';
  active: boolean;
  createdAt: Date;
}

/** Creates an organization with the caller as owner and makes it the session's active one. */
export async function createOrganization(
  db: Db,
  input: { userId: string; sessionId: string | undefined; name: string; timezone?: string | undefined; plan: Plan },
): Promise<OrganizationView> {
  const timezone = input.timezone ?? 'UTC';
  if (!isValidTimeZone(timezone)) throw invalidField('timezone', 'must be an IANA timezone such as America/Chicago');
  const id = newId('org');
  const created = await withTenant(db, id, async (tx) => {
    const [org] = await tx
      .insert(organizations)
      .values({ id, name: input.name.trim(), plan: input.plan, timezone })
      .returning();
    await addMember(tx, id, input.userId, 'owner');
    return org as typeof organizations.$inferSelect;
  });
  if (input.sessionId) await setActiveOrganization(db, input.sessionId, id);
  return { ...view(created, 'owner'), active: input.sessionId !== undefined };
}

/**
 * The organizations a user is a member of (only `organizationId` when given), newest first,
 * with the user's role in each: the memberships from the members module, then their rows.
 */
async function organizationsWithRoles(tx: Tx, userId: string, organizationId?: string) {
  const roles = await rolesOfUser(tx, userId, organizationId);
  if (roles.size === 0) return [];
  const orgs = await tx
    .select()
    .from(organizations)
    .where(inArray(organizations.id, [...roles.keys()]))
    .orderBy(desc(organizations.createdAt), desc(organizations.id));
  return orgs.map((org) => ({ org, role: roles.get(org.id) as string }));
}

/**
 * The organizations a user belongs to. A platform query across tenants: a user's
 * memberships are what decide which tenants they may enter.
 */
export async function listOrganizations(db: Db, userId: string, activeId: string | undefined) {
  const rows = await asPlatform(db, (tx) => organizationsWithRoles(tx, userId));
  return rows.map((r) => ({ ...view(r.org, r.role), active: r.org.id === activeId }));
}

export async function activateOrganization(db: Db, userId: string, sessionId: string, organizationId: string) {
  const [row] = await asPlatform(db, (tx) => organizationsWithRoles(tx, userId, organizationId));
  if (!row) throw notFound('Organization');
  await setActiveOrganization(db, sessionId, organizationId);
  return { ...view(row.org, row.role), active: true };
}

function view(org: typeof organizations.$inferSelect, role: string): Omit<OrganizationView, 'active'> {
  return {
    id: org.id,
    name: org.name,
    plan: org.plan as Plan,
    timezone: org.timezone,
    role: role as OrganizationView['role'],
    createdAt: org.createdAt,
  };
}
