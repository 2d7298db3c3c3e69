import { and, asc, eq } from 'drizzle-orm';
import { members, users } from '../../db/schema/index.js';
import { AppError, notFound } from '../../platform/errors.js';
import type { Ctx, Role } from '../../platform/tenancy.js';

/** The organization's team; other modules check assignments against it. */
export async function listMembers(ctx: Ctx) {
  const rows = await ctx.tx
    .select({
      id: members.id,
      userId: members.userId,
      name: users.name,
      email: users.email,
      role: members.role,
      createdAt: members.createdAt,
    })
    .from(members)
    .innerJoin(users, eq(users.id, members.userId))
    .where(eq(members.organizationId, ctx.organizationId))
    .orderBy(asc(members.createdAt), asc(members.id));
  return rows.map((r) => ({ ...r, role: r.role as Role }));
}

/**
 * Loads the member and locks the organization's owner rows, so that two concurrent
 * changes cannot both remove "the other" owner and leave none.
 */
async function loadForChange(ctx: Ctx, id: string) {
  const owners = await ctx.tx
    .select({ id: members.id })
    .from(members)
    .where(and(eq(members.organizationId, ctx.organizationId), eq(members.role, 'owner')))
    .for('update');
  const [target] = await ctx.tx
    .select()
    .from(members)
    .where(and(eq(members.organizationId, ctx.organizationId), eq(members.id, id)));
  if (!target) throw notFound('Member');
  // Only an owner may make or unmake owners; an admin manages admins and members.
  if (target.role === 'owner' && ctx.actor.role !== 'owner') {
    throw new AppError('FORBIDDEN', 'Only an owner can change or remove an owner');
  }
  return { target, ownerCount: owners.length };
}

export async function changeMemberRole(ctx: Ctx, id: string, role: Role) {
  if (role === 'owner' && ctx.actor.role !== 'owner') throw new AppError('FORBIDDEN', 'Only an owner can make owners');
  const { target, ownerCount } = await loadForChange(ctx, id);
  if (target.role === 'owner' && role !== 'owner' && ownerCount <= 1) {
    throw new AppError('INVALID_STATE', 'The organization must keep at least one owner');
  }
  await ctx.tx
    .update(members)
    .set({ role })
    .where(and(eq(members.organizationId, ctx.organizationId), eq(members.id, id)));
  const [view] = (await listMembers(ctx)).filter((m) => m.id === id);
  return view as NonNullable<typeof view>;
}

export async function removeMember(ctx: Ctx, id: string) {
  const { target, ownerCount } = await loadForChange(ctx, id);
  if (target.role === 'owner' && ownerCount <= 1) {
    throw new AppError('INVALID_STATE', 'The last owner cannot be removed');
  }
  await ctx.tx.delete(members).where(and(eq(members.organizationId, ctx.organizationId), eq(members.id, id)));
}
