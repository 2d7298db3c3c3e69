import { eq } from 'drizzle-orm';
import { crews } from '../../db/schema/index.js';
import { notFound } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { ownedRows } from '../../platform/owned-rows.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import type { Ctx } from '../../platform/tenancy.js';
import { memberUserIds } from '../members/members.refs.js';
import { requireMembers } from './crew-tracking.refs.js';
import type { CreateCrewInput, UpdateCrewInput } from './crews.schemas.js';

type Row = typeof crews.$inferSelect;

/** A member who left the organization drops out of the view (the id stays until the crew is next saved). */
async function views(ctx: Ctx, rows: Row[]) {
  const userOf = await memberUserIds(ctx);
  return rows.map((r) => {
    const present = r.memberIds.filter((id) => userOf.has(id));
    return {
      id: r.id,
      name: r.name,
      memberIds: present,
      members: present.map((memberId) => ({ memberId, userId: userOf.get(memberId) as string })),
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
    };
  });
}

async function one(ctx: Ctx, row: Row) {
  const [view] = await views(ctx, [row]);
  return view as NonNullable<typeof view>;
}

const { mine, find: findCrew } = ownedRows(crews, 'Crew');

export async function createCrew(ctx: Ctx, input: CreateCrewInput) {
  const memberIds = [...new Set(input.memberIds ?? [])];
  await requireMembers(ctx, memberIds);
  const [row] = await ctx.tx
    .insert(crews)
    .values({ id: newId('crw'), organizationId: ctx.organizationId, name: input.name.trim(), memberIds })
    .returning();
  return one(ctx, row as Row);
}

export async function listCrews(ctx: Ctx, page: Page) {
  const { rows, ...more } = await listPage(
    ctx.tx,
    ctx.organizationId,
    crews,
    eq(crews.organizationId, ctx.organizationId),
    page,
  );
  return { rows: await views(ctx, rows), ...more };
}

export async function getCrew(ctx: Ctx, id: string) {
  return one(ctx, await findCrew(ctx, id));
}

export async function updateCrew(ctx: Ctx, id: string, input: UpdateCrewInput) {
  const patch: Partial<Row> = { updatedAt: new Date() };
  if (input.name !== undefined) patch.name = input.name.trim();
  if (input.memberIds !== undefined) {
    patch.memberIds = [...new Set(input.memberIds)];
    await requireMembers(ctx, patch.memberIds);
  }
  const [row] = await ctx.tx.update(crews).set(patch).where(mine(ctx, id)).returning();
  if (!row) throw notFound('Crew');
  return one(ctx, row);
}

export async function deleteCrew(ctx: Ctx, id: string) {
  const rows = await ctx.tx.delete(crews).where(mine(ctx, id)).returning({ id: crews.id });
  if (rows.length === 0) throw notFound('Crew');
}
