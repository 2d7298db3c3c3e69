import { finish, storedToPriced } from '../modules/billing/line-items.js';
import { convertibleEstimate, markConverted } from '../modules/estimates/estimates.service.js';
import { insertInvoice } from '../modules/invoices/invoices.service.js';
import { getOrgSettings } from '../modules/settings/settings.service.js';
import { addDays, today } from '../platform/dates.js';
import type { Ctx } from '../platform/tenancy.js';

/**
 * `POST /api/estimates/{id}/convert`: the estimate becomes a draft invoice with the same
 * lines and the same tax rate, so the invoice totals exactly what the customer approved.
 *
 * estimates (the estimate, locked, that may be converted, and its lines) → settings (today,
 * payment terms) → invoices (the draft invoice, numbered, invoice.created) → estimates (it
 * records the invoice and becomes converted, estimate.converted).
 */
export async function convertEstimate(ctx: Ctx, id: string) {
  const { row, lines } = await convertibleEstimate(ctx, id);
  const settings = await getOrgSettings(ctx);
  const invoiceDate = today(settings.timezone);
  const invoice = await insertInvoice(ctx, {
    customerId: row.customerId,
    propertyId: row.propertyId,
    invoiceDate,
    dueDate: addDays(invoiceDate, settings.paymentTermsDays),
    notes: row.notes,
    estimateId: row.id,
    priced: finish(lines.map(storedToPriced), Number(row.taxRate)),
  });
  return { estimate: await markConverted(ctx, id, invoice.id), invoice };
}
