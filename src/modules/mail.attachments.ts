import { estimatePdf } from './estimates/estimates.service.js';
import { invoicePdf } from './invoices/invoices.service.js';
import type { PdfSources } from './mail/mail.tasks.js';

/**
 * What the PDF a queued mail attaches shows, read and drawn by the worker when it sends rather than
 * stored with the job: the request that queues the mail stays short (rendering takes
 * the fonts and the document's rows), no PDF blobs pile up in the database, and a
 * retry after an outage attaches the document as it is then (a payment made in the
 * meantime shows), like the portal link in the same mail. It names document modules, so it
 * lives at the top beside src/modules/index.ts and is handed to the mail task (src/modules/tasks.ts).
 */
export const pdfSources: PdfSources = {
  invoice: invoicePdf,
  estimate: estimatePdf,
};
