import { and, eq, inArray, sql } from 'drizzle-orm';
import { rowsOf } from '../../db/client.js';
import { bills } from '../../db/schema/index.js';
import { clearReferences } from '../../platform/owned-rows.js';
import type { Ctx } from '../../platform/tenancy.js';

/**
 * The dashboard's payables (operations.md §7), in cents, as of `today`: balances of open
 * and partially_paid bills, and of those due on or before today + 7 (overdue included).
 * One aggregate over (organization_id, status, due_date).
 */
export async function payableFigures(
  ctx: Ctx,
  today: string,
): Promise<{ outstandingCents: number; dueNext7DaysCents: number }> {
  const [row] = rowsOf<{ outstanding: string | number; due: string | number }>(
    await ctx.tx.execute(sql`SELECT
        coalesce(sum(total_cents - amount_paid_cents), 0)::bigint AS outstanding,
        coalesce(sum(total_cents - amount_paid_cents) FILTER (WHERE due_date <= ${today}::date + 7), 0)::bigint AS due
      FROM bills WHERE organization_id = ${ctx.organizationId} AND status IN ('open', 'partially_paid')`),
  );
  return { outstandingCents: Number(row?.outstanding ?? 0), dueNext7DaysCents: Number(row?.due ?? 0) };
}

/** The numbers of this organization's bills among `ids`, by id (a bill payment names the bills it pays). */
export async function billNumbers(ctx: Ctx, ids: string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await ctx.tx
    .select({ id: bills.id, billNumber: bills.billNumber })
    .from(bills)
    .where(and(eq(bills.organizationId, ctx.organizationId), inArray(bills.id, unique)));
  return new Map(rows.map((r) => [r.id, r.billNumber]));
}

/* What ON DELETE SET NULL did before drizzle/0038 (Citus refuses it): the row outlives the one it named, with a null reference. Called by the flows that delete the named rows (src/flows/delete-*.ts), before the delete, in its transaction. */
export const forgetPurchaseOrder = (ctx: Ctx, purchaseOrderId: string): Promise<void> =>
  clearReferences(ctx, bills, bills.purchaseOrderId, [purchaseOrderId]);
