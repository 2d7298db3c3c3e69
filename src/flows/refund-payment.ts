import { applyRefund } from '../modules/invoices/invoices.payments.js';
import { findRow } from '../modules/invoices/invoices.service.js';
import {
  announceRefund,
  insertRefund,
  paidInvoiceId,
  type RecordedRefund,
} from '../modules/payments/payments.service.js';
import { toCents } from '../platform/money.js';
import type { Ctx } from '../platform/tenancy.js';

/**
 * `POST /api/payments/{id}/refunds`: the office gives money back, partly or in full. Stripe's
 * refunds go through the payments module's refundPayment, which takes steps 3 to 5 the same way.
 */
export async function refundPayment(
  ctx: Ctx,
  paymentId: string,
  body: { amount?: number | undefined; reason?: string | undefined },
): Promise<RecordedRefund> {
  // 1. payments: which invoice the payment paid (404 when there is no such payment).
  const invoiceId = await paidInvoiceId(ctx, paymentId);
  // 2. invoices: that invoice, locked FOR UPDATE: the lock every payment path takes first.
  const invoice = await findRow(ctx, invoiceId, true);
  // 3. payments: the payment locked, the refund row (the unapplied excess goes back first), the payment's refunded total and status.
  const { refund, payment } = await insertRefund(ctx, paymentId, {
    amountCents: body.amount === undefined ? undefined : toCents(body.amount, 'amount'),
    reason: body.reason?.trim() || null,
    origin: 'API',
    processorRefundId: null,
  });
  // 4. invoices: the refund's applied part off amountPaid (sent or overdue by today), the ledger's refund entry, invoice.* events.
  const invoiceAfter = await applyRefund(ctx, invoice, refund);
  // 5. payments: payment.refunded.
  return announceRefund(ctx, refund, payment, invoiceAfter);
}
