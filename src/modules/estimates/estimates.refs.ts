import { sql } from 'drizzle-orm';
import { rowsOf } from '../../db/client.js';
import { estimateLineItems, estimates } from '../../db/schema/index.js';
import { clearReferences } from '../../platform/owned-rows.js';
import type { Ctx } from '../../platform/tenancy.js';

/**
 * The dashboard's estimates (operations.md §7): those first sent from `start` (inclusive)
 * to `end` (exclusive), and how many of them are now approved or converted. One aggregate
 * over (organization_id, sent_at); sentAt keeps the first send.
 */
export async function estimateFigures(ctx: Ctx, start: Date, end: Date): Promise<{ sent: number; approved: number }> {
  const [row] = rowsOf<{ sent: number; approved: number }>(
    await ctx.tx.execute(sql`SELECT count(*)::int AS sent,
        count(*) FILTER (WHERE status IN ('approved', 'converted'))::int AS approved
      FROM estimates WHERE organization_id = ${ctx.organizationId} AND sent_at IS NOT NULL
        AND sent_at >= ${start.toISOString()}::timestamptz AND sent_at < ${end.toISOString()}::timestamptz`),
  );
  return { sent: Number(row?.sent ?? 0), approved: Number(row?.approved ?? 0) };
}

/* What ON DELETE SET NULL did before drizzle/0038 (Citus refuses it): the row outlives the one it named, with a null reference. Called by the flows that delete the named rows (src/flows/delete-*.ts), before the delete, in its transaction. */
export const forgetProperty = (ctx: Ctx, propertyId: string): Promise<void> =>
  clearReferences(ctx, estimates, estimates.propertyId, [propertyId]);
export const forgetService = (ctx: Ctx, serviceId: string): Promise<void> =>
  clearReferences(ctx, estimateLineItems, estimateLineItems.serviceId, [serviceId]);
export const forgetJobs = (ctx: Ctx, jobIds: string[]): Promise<void> =>
  clearReferences(ctx, estimates, estimates.jobId, jobIds);
export const forgetInvoices = (ctx: Ctx, invoiceIds: string[]): Promise<void> =>
  clearReferences(ctx, estimates, estimates.invoiceId, invoiceIds);
