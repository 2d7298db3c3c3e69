import { and, eq, inArray, sql } from 'drizzle-orm';
import { rowsOf, type Tx } from '../../db/client.js';
import { members, memberUsers as memberUsersView } from '../../db/schema/index.js';
import { bumpAuthGeneration } from '../../platform/auth/revocations.js';
import { newId } from '../../platform/ids.js';
import type { Ctx, Role } from '../../platform/tenancy.js';

/**
 * Makes a user a member of an organization: its owner when the organization is created,
 * the invited role when an invitation is accepted. The members module owns the table;
 * a user who is a member already stays as they are. `tx` is inside the organization's tenant.
 */
export async function addMember(tx: Tx, organizationId: string, userId: string, role: Role): Promise<void> {
  await tx
    .insert(members)
    .values({ id: newId('mem'), organizationId, userId, role })
    .onConflictDoNothing();
  // A new membership changes what the user's sessions may do (revocations.ts).
  await bumpAuthGeneration(tx);
}

/**
 * A user's roles by organization id, across tenants (`tx` is a platform transaction: the
 * organizations module lists the tenants a user may enter); only `organizationId` when given.
 */
export async function rolesOfUser(tx: Tx, userId: string, organizationId?: string): Promise<Map<string, string>> {
  const rows = await tx
    .select({ organizationId: members.organizationId, role: members.role })
    .from(members)
    .where(
      organizationId === undefined
        ? eq(members.userId, userId)
        : and(eq(members.userId, userId), eq(members.organizationId, organizationId)),
    );
  return new Map(rows.map((r) => [r.organizationId, r.role]));
}

/*
 * Members as other modules see them (crew tracking, jobs, equipment): read here, since the
 * members module owns the table. Each caller turns a missing member into its own 400.
 */

export interface MemberRef {
  id: string;
  userId: string;
  role: string;
}

const refColumns = { id: members.id, userId: members.userId, role: members.role };

/** The member a user is in this organization, if any. */
export async function memberOfUser(ctx: Ctx, userId: string): Promise<MemberRef | undefined> {
  const [row] = await ctx.tx
    .select(refColumns)
    .from(members)
    .where(and(eq(members.organizationId, ctx.organizationId), eq(members.userId, userId)));
  return row;
}

/** The members of this organization among `ids` (member ids), by id; the rest are left out. */
export async function membersById(ctx: Ctx, ids: string[]): Promise<Map<string, MemberRef>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await ctx.tx
    .select(refColumns)
    .from(members)
    .where(and(eq(members.organizationId, ctx.organizationId), inArray(members.id, unique)));
  return new Map(rows.map((r) => [r.id, r]));
}

/** The users among `userIds` who are members of this organization. */
export async function memberUsers(ctx: Ctx, userIds: string[]): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const rows = await ctx.tx
    .select({ userId: members.userId })
    .from(members)
    .where(and(eq(members.organizationId, ctx.organizationId), inArray(members.userId, userIds)));
  return new Set(rows.map((r) => r.userId));
}

/** Every member of this organization: member id → user id. */
export async function memberUserIds(ctx: Ctx): Promise<Map<string, string>> {
  const rows = await ctx.tx
    .select({ id: members.id, userId: members.userId })
    .from(members)
    .where(eq(members.organizationId, ctx.organizationId));
  return new Map(rows.map((m) => [m.id, m.userId]));
}

/** The email addresses of this organization's owners (told of new requests, approvals and signatures). */
export async function ownerEmails(ctx: Ctx): Promise<string[]> {
  const rows = await ctx.tx
    .select({ email: memberUsersView.email })
    .from(members)
    .innerJoin(memberUsersView, eq(memberUsersView.id, members.userId))
    .where(and(eq(members.organizationId, ctx.organizationId), eq(members.role, 'owner')))
    .orderBy(members.createdAt, members.id);
  return rows.map((r) => r.email).filter((e): e is string => typeof e === 'string' && e.length > 0);
}

/** A member's name (through the member_users view: only this organization's members), or null. */
export async function memberName(ctx: Ctx, userId: string): Promise<string | null> {
  const rows = rowsOf<{ name: string | null }>(
    await ctx.tx.execute(sql`SELECT name FROM member_users WHERE id = ${userId}`),
  );
  return rows[0]?.name ?? null;
}
