import { liveProperties } from '../modules/customers/customers.refs.js';
import { createInvoice, type InvoiceDetailView } from '../modules/invoices/invoices.service.js';
import {
  billableStormVisits,
  markVisitsBilled,
  stormInvoiceDrafts,
} from '../modules/winter-routes/storm-billing.service.js';
import type { VisitRow } from '../modules/winter-routes/storms.service.js';
import type { Ctx } from '../platform/tenancy.js';

/**
 * `POST /api/winter-routes/storms/{id}/invoice`: bills a storm (operations.md §6), one draft
 * invoice per customer for its serviced, unbilled visits, through the invoices module, so
 * numbering, rounding, tax, events and ledger are those of any invoice.
 *
 * winter routes (the storm locked, its billable visits FOR UPDATE) → customers (which of their
 * properties still belong to a live customer) → winter routes (the visits as draft invoices,
 * each visit checked against its machine) → invoices (each draft invoice, invoice.created) →
 * winter routes (the visits record their invoice). All in the caller's transaction: concurrent
 * calls never bill a visit twice.
 */
export async function billStorm(ctx: Ctx, stormId: string): Promise<{ invoices: InvoiceDetailView[] }> {
  const { storm, visits } = await billableStormVisits(ctx, stormId);
  if (visits.length === 0) return { invoices: [] };
  const live = await liveProperties(
    ctx,
    visits.map((v) => v.propertyId),
  );
  const invoices: InvoiceDetailView[] = [];
  const billed: Array<{ visit: VisitRow; invoiceId: string }> = [];
  for (const draft of stormInvoiceDrafts(storm, visits, live)) {
    const invoice = await createInvoice(ctx, draft.invoice);
    for (const visit of draft.visits) billed.push({ visit, invoiceId: invoice.id });
    invoices.push(invoice);
  }
  await markVisitsBilled(ctx, billed);
  return { invoices };
}
