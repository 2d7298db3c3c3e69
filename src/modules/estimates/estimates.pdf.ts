import type { Ctx } from '../../platform/tenancy.js';
import { type PdfFile, pdfParties, renderDocumentPdf } from '../billing/document-pdf.js';
import type { EstimateView } from './estimates.service.js';

/** The estimate on paper: company, customer, lines, totals, status and how long it is valid. */
export async function renderEstimatePdf(ctx: Ctx, estimate: EstimateView): Promise<PdfFile> {
  const content = await renderDocumentPdf({
    title: 'Estimate',
    number: estimate.estimateNumber,
    status: estimate.status,
    ...(await pdfParties(ctx, estimate.customerId)),
    facts: [
      ['Estimate date', estimate.estimateDate],
      ['Valid until', estimate.expirationDate],
    ],
    lines: estimate.lineItems,
    subtotal: estimate.subtotal,
    taxRate: estimate.taxRate,
    tax: estimate.tax,
    total: estimate.total,
    notes: estimate.notes,
  });
  return { filename: `${estimate.estimateNumber}.pdf`, content };
}
