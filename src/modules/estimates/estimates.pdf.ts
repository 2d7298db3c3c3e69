import type { PdfSource } from '../../platform/pdf.js';
import type { Ctx } from '../../platform/tenancy.js';
import { documentPdf } from '../billing/document-pdf.js';
import type { EstimateView } from './estimates.service.js';

/** The estimate on paper: company, customer, lines, totals, status and how long it is valid. */
export function estimatePdfSource(ctx: Ctx, estimate: EstimateView): Promise<PdfSource> {
  const facts: Array<[string, string]> = [
    ['Estimate date', estimate.estimateDate],
    ['Valid until', estimate.expirationDate],
  ];
  return documentPdf(ctx, { title: 'Estimate', number: estimate.estimateNumber, facts }, estimate);
}
