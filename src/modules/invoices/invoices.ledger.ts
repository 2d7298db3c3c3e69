import type { invoices, payments } from '../../db/schema/index.js';
import type { Ctx } from '../../platform/tenancy.js';
import { ACCOUNT } from '../ledger/ledger.accounts.js';
import { postEntry } from '../ledger/ledger.service.js';

type InvoiceRow = typeof invoices.$inferSelect;
type PaymentRow = typeof payments.$inferSelect;

/*
 * What each invoice change posts to the ledger (operations.md §3), in the
 * transaction of the change. An invoice enters receivables when it leaves draft;
 * a draft that is voided or deleted was never booked, so it posts nothing.
 */

/**
 * Leaving draft (sent, or paid straight from draft): Dr 1100 total; Cr 4000 subtotal, Cr 2100 tax.
 * `processor`: a Stripe payment took it out of draft, which the close cannot refuse (ledger.service.ts).
 */
export function postInvoiceIssued(ctx: Ctx, inv: InvoiceRow, processor = false) {
  return postEntry(ctx, {
    sourceType: 'invoice',
    sourceId: inv.id,
    memo: `Invoice ${inv.invoiceNumber} issued`,
    documentDates: [{ field: 'invoiceDate', date: inv.invoiceDate }],
    processor,
    lines: [
      { accountCode: ACCOUNT.receivable, debit: inv.totalCents },
      { accountCode: ACCOUNT.revenue, credit: inv.subtotalCents },
      { accountCode: ACCOUNT.salesTax, credit: inv.taxCents },
    ],
  });
}

/**
 * A payment: Dr 1000 what was received; Cr 1100 what was applied to the invoice and
 * Cr 2300 Customer Credits the excess a processor took beyond the balance (or on a
 * void invoice), dated the day it was paid. A Stripe payment dated in the closed period (its
 * charge was made there, the event came after the close) posts on the first open day.
 */
export function postInvoicePayment(ctx: Ctx, inv: InvoiceRow, payment: PaymentRow) {
  return postEntry(ctx, {
    sourceType: 'payment',
    sourceId: payment.id,
    memo: `Payment on invoice ${inv.invoiceNumber}`,
    entryDate: payment.paymentDate,
    dateField: 'paymentDate',
    processor: payment.origin === 'STRIPE',
    lines: [
      { accountCode: ACCOUNT.cash, debit: payment.amountCents },
      { accountCode: ACCOUNT.receivable, credit: payment.amountCents - payment.unappliedCents },
      { accountCode: ACCOUNT.customerCredits, credit: payment.unappliedCents },
    ],
  });
}

/**
 * A refund reverses its share of a payment: Cr 1000 what went back; Dr 2300 the part
 * taken from the unapplied excess, and Dr the account that holds the invoice's paid
 * part: 1100 for an open invoice (its balance grows again), 2300 for a void one (what
 * was paid became a customer credit at void), 6900 for a written-off one. Dated today; a refund
 * made at Stripe is never refused for the close (the first open day when today is closed).
 */
export function postPaymentRefund(
  ctx: Ctx,
  inv: InvoiceRow,
  refund: { id: string; amountCents: number; appliedCents: number; origin?: string | undefined },
) {
  const invoiceAccount =
    inv.status === 'void'
      ? ACCOUNT.customerCredits
      : inv.status === 'written_off'
        ? ACCOUNT.badDebt
        : ACCOUNT.receivable;
  return postEntry(ctx, {
    sourceType: 'refund',
    sourceId: refund.id,
    memo: `Refund on invoice ${inv.invoiceNumber}`,
    processor: refund.origin === 'STRIPE_DASHBOARD',
    lines: [
      { accountCode: invoiceAccount, debit: refund.appliedCents },
      { accountCode: ACCOUNT.customerCredits, debit: refund.amountCents - refund.appliedCents },
      { accountCode: ACCOUNT.cash, credit: refund.amountCents },
    ],
  });
}

/** Write-off: the unpaid balance moves from 1100 to 6900 Bad Debt. */
export function postInvoiceWriteOff(ctx: Ctx, before: InvoiceRow) {
  const balance = before.totalCents - before.amountPaidCents;
  return postEntry(ctx, {
    sourceType: 'invoice',
    sourceId: before.id,
    memo: `Invoice ${before.invoiceNumber} written off`,
    lines: [
      { accountCode: ACCOUNT.badDebt, debit: balance },
      { accountCode: ACCOUNT.receivable, credit: balance },
    ],
  });
}

/**
 * Void of an issued invoice: the revenue and tax are reversed; the unpaid part
 * leaves 1100 (or 6900, when it had been written off), and what the customer had
 * paid becomes a credit owed to them (2300).
 */
export function postInvoiceVoid(ctx: Ctx, before: InvoiceRow) {
  if (before.status === 'draft') return Promise.resolve(null);
  const unpaid = before.totalCents - before.amountPaidCents;
  return postEntry(ctx, {
    sourceType: 'invoice',
    sourceId: before.id,
    memo: `Invoice ${before.invoiceNumber} voided`,
    lines: [
      { accountCode: ACCOUNT.revenue, debit: before.subtotalCents },
      { accountCode: ACCOUNT.salesTax, debit: before.taxCents },
      { accountCode: before.status === 'written_off' ? ACCOUNT.badDebt : ACCOUNT.receivable, credit: unpaid },
      { accountCode: ACCOUNT.customerCredits, credit: before.amountPaidCents },
    ],
  });
}
