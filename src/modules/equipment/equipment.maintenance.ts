import { and, asc, desc, eq, ne, sql } from 'drizzle-orm';
import { equipment, maintenanceLogs, maintenancePlans } from '../../db/schema/index.js';
import { startOfDayIn } from '../../platform/dates.js';
import { invalidField } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { fromCents, toCents } from '../../platform/money.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import type { Ctx } from '../../platform/tenancy.js';
import { instantOf } from '../crew-tracking/instants.js';
import { organizationTimezone } from '../organizations/organizations.refs.js';
import type { CreateLogInput, CreatePlanInput } from './equipment.schemas.js';
import { checkHourMeter, loadEquipment } from './equipment.service.js';

type PlanRow = typeof maintenancePlans.$inferSelect;
type LogRow = typeof maintenanceLogs.$inferSelect;

const planView = (r: PlanRow) => ({
  id: r.id,
  equipmentId: r.equipmentId,
  name: r.name,
  everyHours: r.everyHours,
  everyDays: r.everyDays,
  createdAt: r.createdAt,
});

const logView = (r: LogRow) => ({
  id: r.id,
  equipmentId: r.equipmentId,
  planId: r.planId,
  performedAt: r.performedAt,
  hourMeter: r.hourMeter,
  cost: r.costCents === null ? null : fromCents(r.costCents),
  notes: r.notes,
  createdAt: r.createdAt,
});

export async function createPlan(ctx: Ctx, equipmentId: string, input: CreatePlanInput) {
  await loadEquipment(ctx, equipmentId);
  if ((input.everyHours === undefined) === (input.everyDays === undefined)) {
    throw invalidField('everyHours', 'give exactly one of everyHours or everyDays');
  }
  const [row] = await ctx.tx
    .insert(maintenancePlans)
    .values({
      id: newId('mpl'),
      organizationId: ctx.organizationId,
      equipmentId,
      name: input.name.trim(),
      everyHours: input.everyHours ?? null,
      everyDays: input.everyDays ?? null,
    })
    .returning();
  return planView(row as PlanRow);
}

export async function listPlans(ctx: Ctx, equipmentId: string) {
  await loadEquipment(ctx, equipmentId);
  const rows = await ctx.tx
    .select()
    .from(maintenancePlans)
    .where(and(eq(maintenancePlans.organizationId, ctx.organizationId), eq(maintenancePlans.equipmentId, equipmentId)))
    .orderBy(asc(maintenancePlans.createdAt), asc(maintenancePlans.id));
  return rows.map(planView);
}

/**
 * Logs work on an item. The reading, when given, may not be below the item's meter
 * (it never goes down) and moves the meter forward; without one the log keeps the
 * item's current reading, so hour-based plans count from this service.
 */
export async function createLog(ctx: Ctx, equipmentId: string, input: CreateLogInput) {
  const performedAt = instantOf('performedAt', input.performedAt);
  const item = await loadEquipment(ctx, equipmentId, true);
  checkHourMeter('hourMeter', item.hourMeter, input.hourMeter);
  const costCents = input.cost === undefined ? null : toCents(input.cost, 'cost');
  if (input.planId) {
    const [plan] = await ctx.tx
      .select({ id: maintenancePlans.id })
      .from(maintenancePlans)
      .where(
        and(
          eq(maintenancePlans.organizationId, ctx.organizationId),
          eq(maintenancePlans.equipmentId, equipmentId),
          eq(maintenancePlans.id, input.planId),
        ),
      );
    if (!plan) throw invalidField('planId', `no plan ${input.planId} on this item`);
  }
  const hourMeter = input.hourMeter ?? item.hourMeter;
  if (input.hourMeter !== undefined) {
    await ctx.tx
      .update(equipment)
      .set({ hourMeter, updatedAt: new Date() })
      .where(and(eq(equipment.organizationId, ctx.organizationId), eq(equipment.id, equipmentId)));
  }
  const [row] = await ctx.tx
    .insert(maintenanceLogs)
    .values({
      id: newId('mlg'),
      organizationId: ctx.organizationId,
      equipmentId,
      planId: input.planId ?? null,
      performedAt,
      hourMeter,
      costCents,
      notes: input.notes,
      createdBy: ctx.actor.id,
    })
    .returning();
  return logView(row as LogRow);
}

export async function listLogs(ctx: Ctx, equipmentId: string, page: Page) {
  await loadEquipment(ctx, equipmentId);
  const where = and(
    eq(maintenanceLogs.organizationId, ctx.organizationId),
    eq(maintenanceLogs.equipmentId, equipmentId),
  );
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, maintenanceLogs, where, page);
  return { rows: rows.map(logView), ...more };
}

const DAY_MS = 86_400_000;

/**
 * Plans that are due (operations.md §5 Details), most overdue first. Elapsed is
 * counted from the plan's last log; without one, from purchase (the purchase
 * date for day plans; a meter of 0 for hour plans), or from the plan's creation
 * when there is no purchase date. An hour plan on an item without a meter
 * reading has nothing to count and is never due. Retired items are left out.
 */
export async function maintenanceDue(ctx: Ctx, now = new Date()) {
  const tz = await organizationTimezone(ctx);
  const plans = await ctx.tx
    .select({ plan: maintenancePlans, item: equipment })
    .from(maintenancePlans)
    .innerJoin(equipment, eq(equipment.id, maintenancePlans.equipmentId))
    .where(and(eq(maintenancePlans.organizationId, ctx.organizationId), ne(equipment.status, 'retired')));
  const lastLogs = await ctx.tx
    .selectDistinctOn([maintenanceLogs.planId], {
      planId: maintenanceLogs.planId,
      performedAt: maintenanceLogs.performedAt,
      hourMeter: maintenanceLogs.hourMeter,
    })
    .from(maintenanceLogs)
    .where(and(eq(maintenanceLogs.organizationId, ctx.organizationId), sql`${maintenanceLogs.planId} IS NOT NULL`))
    .orderBy(maintenanceLogs.planId, desc(maintenanceLogs.performedAt));
  const lastOf = new Map(lastLogs.map((l) => [l.planId as string, l]));

  const due: Array<{
    equipmentId: string;
    equipmentName: string;
    planId: string;
    planName: string;
    basis: 'hours' | 'days';
    dueSince: string | number;
    overdueFraction: number;
  }> = [];
  for (const { plan, item } of plans) {
    const last = lastOf.get(plan.id);
    const row = { equipmentId: item.id, equipmentName: item.name, planId: plan.id, planName: plan.name };
    if (plan.everyDays !== null) {
      const base = last
        ? last.performedAt.getTime()
        : item.purchaseDate
          ? startOfDayIn(item.purchaseDate, tz).getTime()
          : plan.createdAt.getTime();
      const interval = plan.everyDays;
      const elapsed = (now.getTime() - base) / DAY_MS;
      if (elapsed >= interval) {
        due.push({
          ...row,
          basis: 'days',
          dueSince: new Date(base + interval * DAY_MS).toISOString(),
          overdueFraction: round((elapsed - interval) / interval),
        });
      }
    } else if (plan.everyHours !== null && item.hourMeter !== null) {
      const base = last?.hourMeter ?? 0;
      const interval = plan.everyHours;
      const elapsed = item.hourMeter - base;
      if (elapsed >= interval) {
        due.push({
          ...row,
          basis: 'hours',
          dueSince: base + interval,
          overdueFraction: round((elapsed - interval) / interval),
        });
      }
    }
  }
  return due.sort((a, b) => b.overdueFraction - a.overdueFraction || a.planId.localeCompare(b.planId));
}

const round = (n: number) => Math.round(n * 10_000) / 10_000;
