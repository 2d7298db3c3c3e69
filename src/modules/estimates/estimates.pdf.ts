import { and, eq } from 'drizzle-orm';
import { customers } from '../../db/schema/index.js';
import { notFound } from '../../platform/errors.js';
import type { Ctx } from '../../platform/tenancy.js';
import { companyOf, customerOf, type PdfFile, renderDocumentPdf } from '../billing/document-pdf.js';
import { getOrgSettings } from '../settings/settings.service.js';
import type { EstimateView } from './estimates.service.js';

/** The estimate on paper: company, customer, lines, totals, status and how long it is valid. */
export async function renderEstimatePdf(ctx: Ctx, estimate: EstimateView): Promise<PdfFile> {
  const [customer] = await ctx.tx
    .select()
    .from(customers)
    .where(and(eq(customers.organizationId, ctx.organizationId), eq(customers.id, estimate.customerId)));
  if (!customer) throw notFound('Customer');
  const settings = await getOrgSettings(ctx);
  const content = await renderDocumentPdf({
    title: 'Estimate',
    number: estimate.estimateNumber,
    status: estimate.status,
    currency: settings.currency,
    facts: [
      ['Estimate date', estimate.estimateDate],
      ['Valid until', estimate.expirationDate],
    ],
    company: companyOf(settings),
    customer: customerOf(customer),
    lines: estimate.lineItems,
    subtotal: estimate.subtotal,
    taxRate: estimate.taxRate,
    tax: estimate.tax,
    total: estimate.total,
    notes: estimate.notes,
  });
  return { filename: `${estimate.estimateNumber}.pdf`, content };
}
