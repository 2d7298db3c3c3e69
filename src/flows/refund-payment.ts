import { findRow } from '../modules/invoices/invoices.service.js';
import { refundPayment as giveBack, paidInvoiceId, type RecordedRefund } from '../modules/payments/payments.service.js';
import { toCents } from '../platform/money.js';
import type { Ctx } from '../platform/tenancy.js';

/**
 * `POST /api/payments/{id}/refunds`: the office gives money back, partly or in full.
 *
 * payments (which invoice the payment paid) → invoices (that invoice, locked FOR UPDATE, the
 * lock every payment path takes first) → payments (refundPayment: the payment locked, the
 * refund row; invoices reversePayment takes what the invoice had received off amountPaid,
 * with settings' today deciding between sent and overdue; invoices' ledger posts the refund;
 * payment.refunded and any invoice.* are emitted). Stripe's refunds go through the same
 * refundPayment.
 */
export async function refundPayment(
  ctx: Ctx,
  paymentId: string,
  body: { amount?: number | undefined; reason?: string | undefined },
): Promise<RecordedRefund> {
  const invoice = await findRow(ctx, await paidInvoiceId(ctx, paymentId), true);
  return giveBack(ctx, invoice, paymentId, {
    amountCents: body.amount === undefined ? undefined : toCents(body.amount, 'amount'),
    reason: body.reason?.trim() || null,
    origin: 'API',
    processorRefundId: null,
  });
}
