import { and, desc, eq, isNull } from 'drizzle-orm';
import { equipment, equipmentAssignments } from '../../db/schema/index.js';
import { invalidField } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import type { Ctx } from '../../platform/tenancy.js';
import { requireCrew, requireJob, requireMember, userIdsOf } from '../crew-tracking/crew-tracking.refs.js';
import { instantOf } from '../crew-tracking/instants.js';
import type { CheckInInput, CheckOutInput } from './equipment.schemas.js';
import { checkHourMeter, equipmentView, loadEquipment } from './equipment.service.js';
import { moveEquipment } from './equipment.states.js';

type Row = typeof equipmentAssignments.$inferSelect;
/** `userId` beside `memberId` (operations.md §4), read from the member: null without one. */
const view = (r: Row, userIds: ReadonlyMap<string, string>) => ({
  id: r.id,
  equipmentId: r.equipmentId,
  memberId: r.memberId,
  userId: (r.memberId && userIds.get(r.memberId)) ?? null,
  crewId: r.crewId,
  jobId: r.jobId,
  checkedOutAt: r.checkedOutAt,
  checkedInAt: r.checkedInAt,
  hourMeterOut: r.hourMeterOut,
  hourMeterIn: r.hourMeterIn,
});

/** available → in_use; the item row is locked, so two check-outs of one mower cannot both pass. */
export async function checkOut(ctx: Ctx, id: string, input: CheckOutInput) {
  const at = instantOf('at', input.at);
  const item = await loadEquipment(ctx, id, true);
  const status = moveEquipment('checkOut', item.status, 'in_use');
  if (input.memberId) await requireMember(ctx, input.memberId);
  if (input.crewId) await requireCrew(ctx, input.crewId);
  if (input.jobId) await requireJob(ctx, input.jobId);
  await ctx.tx.insert(equipmentAssignments).values({
    id: newId('eqa'),
    organizationId: ctx.organizationId,
    equipmentId: id,
    memberId: input.memberId ?? null,
    crewId: input.crewId ?? null,
    jobId: input.jobId ?? null,
    checkedOutAt: at,
    hourMeterOut: item.hourMeter,
    createdBy: ctx.actor.id,
  });
  const [updated] = await ctx.tx
    .update(equipment)
    .set({ status, updatedAt: new Date() })
    .where(and(eq(equipment.organizationId, ctx.organizationId), eq(equipment.id, id)))
    .returning();
  return equipmentView(updated as typeof item);
}

/** in_use → available, closing the open assignment; the meter may only move forward. */
export async function checkIn(ctx: Ctx, id: string, input: CheckInInput) {
  const at = instantOf('at', input.at);
  const item = await loadEquipment(ctx, id, true);
  const status = moveEquipment('checkIn', item.status, 'available');
  checkHourMeter('hourMeter', item.hourMeter, input.hourMeter);
  const [open] = await ctx.tx
    .select()
    .from(equipmentAssignments)
    .where(
      and(
        eq(equipmentAssignments.organizationId, ctx.organizationId),
        eq(equipmentAssignments.equipmentId, id),
        isNull(equipmentAssignments.checkedInAt),
      ),
    )
    .orderBy(desc(equipmentAssignments.checkedOutAt));
  if (open && at.getTime() < open.checkedOutAt.getTime()) {
    throw invalidField('at', `is before the check-out at ${open.checkedOutAt.toISOString()}`);
  }
  const hourMeter = input.hourMeter ?? item.hourMeter;
  if (open) {
    await ctx.tx
      .update(equipmentAssignments)
      .set({ checkedInAt: at, hourMeterIn: hourMeter })
      .where(and(eq(equipmentAssignments.organizationId, ctx.organizationId), eq(equipmentAssignments.id, open.id)));
  }
  const [updated] = await ctx.tx
    .update(equipment)
    .set({ status, hourMeter, updatedAt: new Date() })
    .where(and(eq(equipment.organizationId, ctx.organizationId), eq(equipment.id, id)))
    .returning();
  return equipmentView(updated as typeof item);
}

export async function listAssignments(ctx: Ctx, id: string, page: Page) {
  await loadEquipment(ctx, id);
  const where = and(
    eq(equipmentAssignments.organizationId, ctx.organizationId),
    eq(equipmentAssignments.equipmentId, id),
  );
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, equipmentAssignments, where, page);
  const userIds = await userIdsOf(
    ctx,
    rows.map((r) => r.memberId),
  );
  return { rows: rows.map((r) => view(r, userIds)), ...more };
}
