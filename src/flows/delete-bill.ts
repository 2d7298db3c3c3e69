import { deletableBill, removeBill } from '../modules/bills/bills.service.js';
import { releaseBill } from '../modules/purchase-orders/purchase-orders.refs.js';
import type { Ctx } from '../platform/tenancy.js';

/**
 * `DELETE /api/bills/{id}`: a draft bill goes, and the purchase order it was made from (POST
 * /api/purchase-orders/{id}/bill) may be billed again.
 *
 * bills (the bill, locked: a draft, else 409) → purchase orders (the order pointing at it lets
 * go) → bills (the bill and its lines deleted).
 */
export async function deleteBill(ctx: Ctx, id: string): Promise<void> {
  const draft = await deletableBill(ctx, id);
  await releaseBill(ctx, draft.id);
  await removeBill(ctx, draft);
}
