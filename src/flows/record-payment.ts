import { applyPayment } from '../modules/invoices/invoices.payments.js';
import { findRow, type InvoiceDetailView } from '../modules/invoices/invoices.service.js';
import { announcePayment, insertPayment, type PaymentInput } from '../modules/payments/payments.service.js';
import { getOrgSettings } from '../modules/settings/settings.service.js';
import { today } from '../platform/dates.js';
import { invalidField } from '../platform/errors.js';
import { toCents } from '../platform/money.js';
import type { Ctx } from '../platform/tenancy.js';

/**
 * `POST /api/invoices/{id}/payments`: the office records money it received. Stripe, deposits
 * and the portal receive money through the payments module's receivePayment, which takes
 * steps 3 to 5 the same way.
 */
export async function recordPayment(ctx: Ctx, invoiceId: string, input: PaymentInput): Promise<InvoiceDetailView> {
  // 1. invoices: the invoice, locked FOR UPDATE, so concurrent payments queue and each sees the balance the last one left.
  const invoice = await findRow(ctx, invoiceId, true);
  const amountCents = toCents(input.amount, 'amount');
  // 2. settings: today in the organization's timezone; no payment is dated later.
  const todayDate = today((await getOrgSettings(ctx)).timezone);
  const paymentDate = input.paymentDate ?? todayDate;
  if (paymentDate > todayDate) throw invalidField('paymentDate', `must not be after today (${todayDate})`);
  // 3. payments: the payment row; the invoice says what it takes (a closed invoice is a 409, more than the balance a 400).
  const payment = await insertPayment(ctx, invoice, {
    amountCents,
    paymentDate,
    method: input.method,
    reference: input.reference?.trim() || null,
    origin: 'API',
    processorPaymentId: null,
    keepExcess: false,
  });
  // 4. invoices: amountPaid and status, the ledger's receivable and cash, invoice.* events.
  const paid = await applyPayment(ctx, invoice, payment);
  // 5. payments: payment.received.
  await announcePayment(ctx, payment, paid);
  return paid;
}
