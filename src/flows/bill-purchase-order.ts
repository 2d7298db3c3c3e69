import { insertBill } from '../modules/bills/bills.service.js';
import { ACCOUNT } from '../modules/ledger/ledger.accounts.js';
import { billableOrder, markBilled } from '../modules/purchase-orders/purchase-orders.service.js';
import { getOrgSettings } from '../modules/settings/settings.service.js';
import { requireVendor } from '../modules/vendors/vendors.service.js';
import { addDays, today } from '../platform/dates.js';
import { fromCents } from '../platform/money.js';
import type { Ctx } from '../platform/tenancy.js';

/**
 * `POST /api/purchase-orders/{id}/bill`: a draft bill with the received order's lines
 * (amount = the line's amount, booked to 5100 Equipment and Maintenance when the line names
 * equipment, else 5000). One bill per order: a second → 409.
 *
 * purchase orders (the order, locked and checked) → vendors (payment terms) → settings
 * (today, default terms) → bills (the draft bill) → purchase orders (the order points at it).
 */
export async function billPurchaseOrder(ctx: Ctx, id: string) {
  const { order, lines } = await billableOrder(ctx, id);
  const vendor = await requireVendor(ctx, order.vendorId, { allowInactive: true });
  const settings = await getOrgSettings(ctx);
  const billDate = today(settings.timezone);
  const bill = await insertBill(ctx, {
    vendor,
    purchaseOrderId: order.id,
    vendorReference: null,
    billDate,
    dueDate: addDays(billDate, vendor.paymentTermsDays ?? settings.paymentTermsDays),
    notes: `From purchase order ${order.poNumber}`,
    lines: lines.map((l) => ({
      description: `${l.description} (${Number(l.quantity)} × ${fromCents(l.unitCostCents).toFixed(2)})`,
      amountCents: l.amountCents,
      accountCode: l.equipmentId ? '5100' : ACCOUNT.materials,
    })),
    totalCents: lines.reduce((s, l) => s + l.amountCents, 0),
    draft: true,
  });
  await markBilled(ctx, order.id, bill.id);
  return bill;
}
