import { and, asc, eq } from 'drizzle-orm';
import { payments } from '../../db/schema/index.js';
import { fromCents } from '../../platform/money.js';
import type { Ctx } from '../../platform/tenancy.js';
import { type PdfFile, pdfParties, renderDocumentPdf } from '../billing/document-pdf.js';
import type { InvoiceDetailView } from './invoices.service.js';

/** The invoice as the customer gets it on paper: company, customer, lines, totals, payments, status, due date. */
export async function renderInvoicePdf(ctx: Ctx, invoice: InvoiceDetailView): Promise<PdfFile> {
  const id = invoice.id;
  const parties = await pdfParties(ctx, invoice.customerId);
  const paid = await ctx.tx
    .select()
    .from(payments)
    .where(and(eq(payments.organizationId, ctx.organizationId), eq(payments.invoiceId, id)))
    .orderBy(asc(payments.createdAt), asc(payments.id));
  const content = await renderDocumentPdf({
    title: 'Invoice',
    number: invoice.invoiceNumber,
    status: invoice.status,
    ...parties,
    facts: [
      ['Invoice date', invoice.invoiceDate],
      ['Due date', invoice.dueDate],
    ],
    lines: invoice.lineItems,
    subtotal: invoice.subtotal,
    taxRate: invoice.taxRate,
    tax: invoice.tax,
    total: invoice.total,
    payments: paid.map((p) => ({
      date: p.paymentDate,
      method: p.method,
      amount: fromCents(p.amountCents),
      refunded: fromCents(p.refundedCents),
    })),
    amountPaid: invoice.amountPaid,
    balance: invoice.balance,
    notes: invoice.notes,
  });
  return { filename: `${invoice.invoiceNumber}.pdf`, content };
}
