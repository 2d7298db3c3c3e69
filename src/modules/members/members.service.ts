import { and, eq, type SQL } from 'drizzle-orm';
import { members, memberUsers } from '../../db/schema/index.js';
import { bumpAuthGeneration } from '../../platform/auth/revocations.js';
import { AppError } from '../../platform/errors.js';
import { ownedRows } from '../../platform/owned-rows.js';
import { afterCursor, type ListOrder, orderOf, pageOfRows, rowExists } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import type { Ctx, Role } from '../../platform/tenancy.js';

/** Oldest member first: the founder leads the team list. */
const MEMBER_ORDER: ListOrder = { columns: [members.createdAt, members.id], direction: 'asc' };

/** The organization's team, one page (operations.md §1). */
export async function listMembers(ctx: Ctx, page: Page) {
  const where: SQL[] = [eq(members.organizationId, ctx.organizationId)];
  if (page.startingAfter !== undefined) {
    where.push(afterCursor(members, MEMBER_ORDER, members.organizationId, ctx.organizationId, page.startingAfter));
  }
  const fetched = await memberViews(ctx, and(...where))
    .orderBy(...orderOf(MEMBER_ORDER))
    .limit(page.limit + 1)
    .offset(page.offset);
  const { rows, hasMore } = await pageOfRows(fetched, page, () =>
    rowExists(ctx.tx, members, ctx.organizationId, page.startingAfter as string),
  );
  return { rows: rows.map((r) => ({ ...r, role: r.role as Role })), hasMore, total: await memberCount(ctx, page) };
}

async function memberCount(ctx: Ctx, page: Page) {
  if (!page.includeTotal) return undefined;
  return ctx.tx.$count(members, eq(members.organizationId, ctx.organizationId));
}

function memberViews(ctx: Ctx, where: SQL | undefined) {
  return (
    ctx.tx
      .select({
        id: members.id,
        userId: members.userId,
        name: memberUsers.name,
        email: memberUsers.email,
        role: members.role,
        createdAt: members.createdAt,
      })
      .from(members)
      // Names and emails through the view of this organization's members: tenant code cannot read `users`.
      .innerJoin(memberUsers, eq(memberUsers.id, members.userId))
      .where(where)
      .$dynamic()
  );
}

const memberRows = ownedRows(members, 'Member');

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
  const target = await memberRows.find(ctx, id);
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
  await ctx.tx.update(members).set({ role }).where(memberRows.mine(ctx, id));
  await bumpAuthGeneration(ctx.tx);
  const [view] = await memberViews(ctx, memberRows.mine(ctx, id));
  return { ...(view as NonNullable<typeof view>), role: (view as NonNullable<typeof view>).role as Role };
}

export async function removeMember(ctx: Ctx, id: string) {
  const { target, ownerCount } = await loadForChange(ctx, id);
  if (target.role === 'owner' && ownerCount <= 1) {
    throw new AppError('INVALID_STATE', 'The last owner cannot be removed');
  }
  // Its device tokens go with it (ON DELETE CASCADE): one announcement for both.
  await ctx.tx.delete(members).where(memberRows.mine(ctx, id));
  await bumpAuthGeneration(ctx.tx);
}
