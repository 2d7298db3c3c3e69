import type { PortalHandler } from '../portal-links/portal-links.handlers.js';
import { invoicePdf, viewInvoiceInPortal } from './invoices.service.js';

/** The customer sees the invoice (lines, payments, balance); paying online is the payments module's job. */
export const invoicePortal: PortalHandler = {
  view: (ctx, id) => viewInvoiceInPortal(ctx, id),
  pdf: (ctx, id) => invoicePdf(ctx, id),
  actions: {},
};
