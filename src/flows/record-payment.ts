import { findRow } from '../modules/invoices/invoices.service.js';
import { type PaymentInput, receivePayment } from '../modules/payments/payments.service.js';
import { getOrgSettings } from '../modules/settings/settings.service.js';
import { today } from '../platform/dates.js';
import { invalidField } from '../platform/errors.js';
import { toCents } from '../platform/money.js';
import type { Ctx } from '../platform/tenancy.js';

/**
 * `POST /api/invoices/{id}/payments`: the office records money it received.
 *
 * invoices (the invoice, locked FOR UPDATE so concurrent payments queue) → settings (today
 * in the organization's timezone: no payment dated later) → payments (receivePayment: the
 * payment row; invoices applyPayment moves amountPaid and status; invoices' ledger posts
 * receivables and cash; invoice.* and payment.received are emitted). Stripe, deposits and
 * the portal receive money through the same receivePayment.
 */
export async function recordPayment(ctx: Ctx, invoiceId: string, input: PaymentInput) {
  const invoice = await findRow(ctx, invoiceId, true);
  const amountCents = toCents(input.amount, 'amount');
  const { timezone } = await getOrgSettings(ctx);
  const todayDate = today(timezone);
  const paymentDate = input.paymentDate ?? todayDate;
  if (paymentDate > todayDate) throw invalidField('paymentDate', `must not be after today (${todayDate})`);
  const recorded = await receivePayment(ctx, invoice, {
    amountCents,
    paymentDate,
    method: input.method,
    reference: input.reference?.trim() || null,
    origin: 'API',
    processorPaymentId: null,
    keepExcess: false,
  });
  return recorded.invoice;
}
