import { and, eq } from 'drizzle-orm';
import { purchaseOrders } from '../../db/schema/index.js';
import { clearReferences } from '../../platform/owned-rows.js';
import type { Ctx } from '../../platform/tenancy.js';

/*
 * What the bill flows (src/flows/create-bill.ts, delete-bill.ts) ask of purchase orders: the
 * purchase-orders module owns the table, and the bills module does not import this one.
 */

/** The vendor of a purchase order of this organization, or undefined when there is none. */
export async function purchaseOrderVendorId(ctx: Ctx, id: string): Promise<string | undefined> {
  const [po] = await ctx.tx
    .select({ vendorId: purchaseOrders.vendorId })
    .from(purchaseOrders)
    .where(and(eq(purchaseOrders.organizationId, ctx.organizationId), eq(purchaseOrders.id, id)));
  return po?.vendorId;
}

/** A draft bill is being deleted: the order it came from lets go of it and may be billed again. */
export async function releaseBill(ctx: Ctx, billId: string): Promise<void> {
  await ctx.tx
    .update(purchaseOrders)
    .set({ billId: null })
    .where(and(eq(purchaseOrders.organizationId, ctx.organizationId), eq(purchaseOrders.billId, billId)));
}

/* What ON DELETE SET NULL did before drizzle/0038 (Citus refuses it): the row outlives the one it named, with a null reference. Called by the flows that delete the named rows (src/flows/delete-*.ts), before the delete, in its transaction. */
export const forgetJobs = (ctx: Ctx, jobIds: string[]): Promise<void> =>
  clearReferences(ctx, purchaseOrders, purchaseOrders.jobId, jobIds);
