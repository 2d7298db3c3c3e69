import { liveProperties } from '../modules/customers/customers.refs.js';
import { createInvoices, type InvoiceDetailView } from '../modules/invoices/invoices.service.js';
import {
  billableStormVisits,
  markVisitsBilled,
  stormInvoiceDrafts,
} from '../modules/winter-routes/storm-billing.service.js';
import type { Ctx } from '../platform/tenancy.js';

/**
 * `POST /api/winter-routes/storms/{id}/invoice`: bills a storm (operations.md §6), one draft
 * invoice per customer for its serviced, unbilled visits, through the invoices module, so
 * numbering, rounding, tax, events and ledger are those of any invoice. All in the caller's
 * transaction: concurrent calls never bill a visit twice.
 */
export async function billStorm(ctx: Ctx, stormId: string): Promise<{ invoices: InvoiceDetailView[] }> {
  // 1. winter routes: the storm locked, its billable visits FOR UPDATE.
  const { storm, visits } = await billableStormVisits(ctx, stormId);
  if (visits.length === 0) return { invoices: [] };
  // 2. customers: which of the visits' properties still belong to a live customer.
  const live = await liveProperties(
    ctx,
    visits.map((v) => v.propertyId),
  );
  // 3. winter routes: the visits as draft invoices, each visit checked against its machine.
  const drafts = stormInvoiceDrafts(storm, visits, live);
  // 4. invoices: every draft invoice checked, then stored in one batch (numbers, lines, invoice.created).
  const invoices = await createInvoices(
    ctx,
    drafts.map((d) => d.invoice),
  );
  // 5. winter routes: the visits record their invoice.
  await markVisitsBilled(
    ctx,
    drafts.flatMap((d, i) => d.visits.map((visit) => ({ visit, invoiceId: (invoices[i] as InvoiceDetailView).id }))),
  );
  return { invoices };
}
