import type { CreateBillInput } from '../modules/bills/bills.schemas.js';
import { createBill as recordBill } from '../modules/bills/bills.service.js';
import { purchaseOrderVendorId } from '../modules/purchase-orders/purchase-orders.refs.js';
import type { Ctx } from '../platform/tenancy.js';

/**
 * `POST /api/bills`: a vendor bill, posted at once unless a draft. A bill may name the
 * purchase order it is for: an order of this organization and of the bill's vendor (else 400
 * on purchaseOrderId, after the vendor's own checks, nothing written).
 *
 * purchase orders (the named order's vendor, when purchaseOrderId is given) → bills (lines,
 * vendor, the order's vendor and dates checked; the bill, posted unless draft; bill.created).
 */
export async function createBill(ctx: Ctx, input: CreateBillInput) {
  const orderVendorId = input.purchaseOrderId ? await purchaseOrderVendorId(ctx, input.purchaseOrderId) : undefined;
  return recordBill(ctx, input, orderVendorId);
}
