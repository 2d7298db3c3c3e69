import { and, eq, type SQL } from 'drizzle-orm';
import { sqlStateOf } from '../../db/pg-errors.js';
import { equipment, equipmentAssignments, maintenanceLogs } from '../../db/schema/index.js';
import { AppError, invalidField } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { fromCents, toCents } from '../../platform/money.js';
import { ownedRows } from '../../platform/owned-rows.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import type { Ctx } from '../../platform/tenancy.js';
import type { CreateEquipmentInput, EquipmentStatus, UpdateEquipmentInput } from './equipment.schemas.js';
import { moveEquipment } from './equipment.states.js';

export type EquipmentRow = typeof equipment.$inferSelect;

export function equipmentView(r: EquipmentRow) {
  return {
    id: r.id,
    name: r.name,
    category: r.category as CreateEquipmentInput['category'],
    make: r.make,
    model: r.model,
    serialNumber: r.serialNumber,
    purchaseDate: r.purchaseDate,
    purchaseCost: r.purchaseCostCents === null ? null : fromCents(r.purchaseCostCents),
    hourMeter: r.hourMeter,
    notes: r.notes,
    status: r.status as EquipmentStatus,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

const equipmentRows = ownedRows(equipment, 'Equipment');
const { mine } = equipmentRows;

/** An hour meter only moves forward (operations.md §5), on every write that carries one. */
export function checkHourMeter(field: string, current: number | null, next: number | null | undefined) {
  if (next === undefined || current === null) return;
  if (next === null || next < current) {
    throw invalidField(field, `the hour meter never goes down (currently ${current})`);
  }
}

const duplicateSerial = () => new AppError('CONFLICT', 'Another item of this organization has this serial number');

async function writing<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (sqlStateOf(err) === '23505') throw duplicateSerial();
    throw err;
  }
}

function columnsOf(input: UpdateEquipmentInput): Partial<EquipmentRow> {
  const out: Partial<EquipmentRow> = {};
  if (input.purchaseCost !== undefined) {
    out.purchaseCostCents = input.purchaseCost === null ? null : toCents(input.purchaseCost, 'purchaseCost');
  }
  if (input.name !== undefined) out.name = input.name.trim();
  if (input.category !== undefined) out.category = input.category;
  if (input.make !== undefined) out.make = input.make?.trim() || null;
  if (input.model !== undefined) out.model = input.model?.trim() || null;
  if (input.serialNumber !== undefined) out.serialNumber = input.serialNumber?.trim() || null;
  if (input.purchaseDate !== undefined) out.purchaseDate = input.purchaseDate;
  if (input.hourMeter !== undefined) out.hourMeter = input.hourMeter;
  if (input.notes !== undefined) out.notes = input.notes;
  return out;
}

export async function createEquipment(ctx: Ctx, input: CreateEquipmentInput) {
  const values = columnsOf(input) as Partial<EquipmentRow> & { name: string; category: string };
  const [row] = await writing(() =>
    ctx.tx
      .insert(equipment)
      .values({ ...values, id: newId('eqp'), organizationId: ctx.organizationId, status: 'available' })
      .returning(),
  );
  return equipmentView(row as EquipmentRow);
}

export async function listEquipment(
  ctx: Ctx,
  f: { status?: string | undefined; category?: string | undefined },
  page: Page,
) {
  const where: SQL[] = [eq(equipment.organizationId, ctx.organizationId)];
  if (f.status) where.push(eq(equipment.status, f.status));
  if (f.category) where.push(eq(equipment.category, f.category));
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, equipment, and(...where), page);
  return { rows: rows.map(equipmentView), ...more };
}

export const loadEquipment = equipmentRows.find;

export async function getEquipment(ctx: Ctx, id: string) {
  return equipmentView(await loadEquipment(ctx, id));
}

export async function updateEquipment(ctx: Ctx, id: string, input: UpdateEquipmentInput) {
  const row = await loadEquipment(ctx, id, true);
  checkHourMeter('hourMeter', row.hourMeter, input.hourMeter);
  const patch = columnsOf(input);
  if (input.status !== undefined) {
    patch.status = moveEquipment('patch', row.status, input.status);
  }
  const [updated] = await writing(() =>
    ctx.tx
      .update(equipment)
      .set({ ...patch, updatedAt: new Date() })
      .where(mine(ctx, id))
      .returning(),
  );
  return equipmentView(updated as EquipmentRow);
}

/** Only an item without history may go (409 otherwise: retire it instead, so the history stays). */
export async function deleteEquipment(ctx: Ctx, id: string) {
  await loadEquipment(ctx, id, true);
  const [assignment] = await ctx.tx
    .select({ id: equipmentAssignments.id })
    .from(equipmentAssignments)
    .where(and(eq(equipmentAssignments.organizationId, ctx.organizationId), eq(equipmentAssignments.equipmentId, id)))
    .limit(1);
  const [log] = await ctx.tx
    .select({ id: maintenanceLogs.id })
    .from(maintenanceLogs)
    .where(and(eq(maintenanceLogs.organizationId, ctx.organizationId), eq(maintenanceLogs.equipmentId, id)))
    .limit(1);
  if (assignment || log) {
    throw new AppError('CONFLICT', 'This item has check-out or maintenance history; retire it instead (PATCH status)');
  }
  await ctx.tx.delete(equipment).where(mine(ctx, id));
}
