import { and, asc, eq } from 'drizzle-orm';
import { payments } from '../../db/schema/index.js';
import { fromCents } from '../../platform/money.js';
import type { PdfSource } from '../../platform/pdf.js';
import type { Ctx } from '../../platform/tenancy.js';
import { documentPdf } from '../billing/document-pdf.js';
import type { InvoiceDetailView } from './invoices.service.js';

/** The invoice as the customer gets it on paper: company, customer, lines, totals, payments, status, due date. */
export async function invoicePdfSource(ctx: Ctx, invoice: InvoiceDetailView): Promise<PdfSource> {
  const paid = await ctx.tx
    .select()
    .from(payments)
    .where(and(eq(payments.organizationId, ctx.organizationId), eq(payments.invoiceId, invoice.id)))
    .orderBy(asc(payments.createdAt), asc(payments.id));
  const facts: Array<[string, string]> = [
    ['Invoice date', invoice.invoiceDate],
    ['Due date', invoice.dueDate],
  ];
  return documentPdf(ctx, { title: 'Invoice', number: invoice.invoiceNumber, facts }, invoice, {
    payments: paid.map((p) => ({
      date: p.paymentDate,
      method: p.method,
      amount: fromCents(p.amountCents),
      refunded: fromCents(p.refundedCents),
    })),
    amountPaid: invoice.amountPaid,
    balance: invoice.balance,
  });
}
