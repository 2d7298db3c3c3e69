import { sql } from 'drizzle-orm';
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

/* What ON DELETE SET NULL did before drizzle/0038 (Citus refuses it): the row outlives the one it named, with a null reference. Called by the flows that delete the named rows (src/flows/delete-*.ts), before the delete, in its transaction. */
export const forgetPurchaseOrder = (ctx: Ctx, purchaseOrderId: string): Promise<void> =>
  clearReferences(ctx, bills, bills.purchaseOrderId, [purchaseOrderId]);
