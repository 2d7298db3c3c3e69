import type { Ctx } from '../../platform/tenancy.js';
import type { PdfSource } from '../billing/document-pdf.js';
import { estimatePdf } from '../estimates/estimates.service.js';
import { invoicePdf } from '../invoices/invoices.service.js';
import type { MailDocumentType } from './mail.service.js';

/**
 * What the PDF a queued mail attaches shows, read and drawn by the worker when it sends rather than
 * stored with the job: the request that queues the mail stays short (rendering takes
 * the fonts and the document's rows), no PDF blobs pile up in the database, and a
 * retry after an outage attaches the document as it is then (a payment made in the
 * meantime shows), like the portal link in the same mail.
 */
export const pdfSources: Partial<Record<MailDocumentType, (ctx: Ctx, id: string) => Promise<PdfSource>>> = {
  invoice: invoicePdf,
  estimate: estimatePdf,
};
