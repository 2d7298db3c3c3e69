import { and, asc, eq, gt, gte, inArray, lte, type SQL, sql } from 'drizzle-orm';
import { paymentRefunds, payments } from '../../db/schema/index.js';
import { invalidField, notFound } from '../../platform/errors.js';
import { emit } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import { fromCents } from '../../platform/money.js';
import { ownedRows } from '../../platform/owned-rows.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import { take } from '../../platform/state-machine.js';
import type { Ctx } from '../../platform/tenancy.js';
import { calendarBound } from '../billing/date-filter.js';
import { applyPayment, applyRefund, paymentShare } from '../invoices/invoices.payments.js';
import { type InvoiceRef, invoiceIdsOfCustomer, invoiceRefs } from '../invoices/invoices.refs.js';
import type { PaymentMethod } from '../invoices/invoices.schemas.js';
import { eventData, type InvoiceDetailView, type InvoiceRow } from '../invoices/invoices.service.js';
import { getOrgSettings } from '../settings/settings.service.js';
import {
  type PaymentOrigin,
  type PaymentStatus,
  paymentMachine,
  type RefundOrigin,
  refundTriggerOf,
} from './payments.states.js';

type PaymentRow = typeof payments.$inferSelect;
type RefundRow = typeof paymentRefunds.$inferSelect;

export const refundView = (r: RefundRow) => ({
  id: r.id,
  paymentId: r.paymentId,
  amount: fromCents(r.amountCents),
  reason: r.reason,
  origin: r.origin as RefundOrigin,
  processorRefundId: r.processorRefundId,
  createdAt: r.createdAt,
});
export type RefundView = ReturnType<typeof refundView>;

export const paymentView = (p: PaymentRow, invoice: InvoiceRef) => ({
  id: p.id,
  amount: fromCents(p.amountCents),
  paymentDate: p.paymentDate,
  method: p.method as PaymentMethod,
  createdAt: p.createdAt,
  invoiceId: p.invoiceId,
  invoiceNumber: invoice.invoiceNumber,
  customerId: invoice.customerId,
  reference: p.reference,
  status: p.status as PaymentStatus,
  refundedAmount: fromCents(p.refundedCents),
  unappliedAmount: fromCents(p.unappliedCents),
  origin: p.origin as PaymentOrigin,
  processorPaymentId: p.processorPaymentId,
});
export type PaymentView = ReturnType<typeof paymentView>;
export type PaymentDetailView = PaymentView & { refunds: RefundView[] };

async function paymentDetail(ctx: Ctx, row: PaymentRow, invoice?: InvoiceRef): Promise<PaymentDetailView> {
  const ref = invoice ?? (await invoiceRefs(ctx, [row.invoiceId])).get(row.invoiceId);
  if (!ref) throw notFound('Invoice');
  const refunds = await ctx.tx
    .select()
    .from(paymentRefunds)
    .where(and(eq(paymentRefunds.organizationId, ctx.organizationId), eq(paymentRefunds.paymentId, row.id)))
    .orderBy(asc(paymentRefunds.createdAt), asc(paymentRefunds.id));
  return { ...paymentView(row, ref), refunds: refunds.map(refundView) };
}

const findPayment = ownedRows(payments, 'Payment').find;

export async function getPayment(ctx: Ctx, id: string): Promise<PaymentDetailView> {
  return paymentDetail(ctx, await findPayment(ctx, id, false));
}

export interface PaymentListFilters {
  customerId?: string | undefined;
  invoiceId?: string | undefined;
  method?: PaymentMethod | undefined;
  status?: PaymentStatus | undefined;
  from?: string | undefined;
  to?: string | undefined;
  unapplied?: 'true' | 'false' | undefined;
}

export async function listPayments(ctx: Ctx, q: PaymentListFilters, page: Page) {
  const where: SQL[] = [eq(payments.organizationId, ctx.organizationId)];
  if (q.invoiceId) where.push(eq(payments.invoiceId, q.invoiceId));
  if (q.customerId) {
    // A payment's customer is its invoice's, which no longer changes once anything is paid.
    where.push(inArray(payments.invoiceId, invoiceIdsOfCustomer(ctx, q.customerId)));
  }
  if (q.method) where.push(eq(payments.method, q.method));
  if (q.status) where.push(eq(payments.status, q.status));
  if (q.unapplied === 'true') where.push(gt(payments.unappliedCents, 0));
  if (q.unapplied === 'false') where.push(eq(payments.unappliedCents, 0));
  if (q.from !== undefined || q.to !== undefined) {
    const { timezone } = await getOrgSettings(ctx);
    if (q.from !== undefined) where.push(gte(payments.paymentDate, calendarBound('from', q.from, timezone)));
    if (q.to !== undefined) where.push(lte(payments.paymentDate, calendarBound('to', q.to, timezone)));
  }
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, payments, and(...where), page);
  const refs = await invoiceRefs(
    ctx,
    rows.map((r) => r.invoiceId),
  );
  return {
    rows: rows.map((r) => paymentView(r, refs.get(r.invoiceId) as InvoiceRef)),
    ...more,
  };
}

export interface IncomingPayment {
  amountCents: number;
  paymentDate: string;
  method: PaymentMethod;
  reference: string | null;
  origin: PaymentOrigin;
  processorPaymentId: string | null;
  /**
   * false (the office through the API): more than the balance is a 400 and a
   * closed invoice a 409. true (a processor that already took the money): the part
   * the invoice cannot take is kept on the payment as unapplied, never dropped.
   */
  keepExcess: boolean;
}

export interface RecordedPayment {
  payment: PaymentView;
  invoice: InvoiceDetailView;
}

/**
 * The row of money received on `invoice`, which the caller holds FOR UPDATE, so concurrent
 * payments queue and each sees the balance the previous one left: the balance never goes
 * below zero and no payment counts twice. The invoices module says how much the invoice takes
 * (paymentShare); what it cannot take is kept on the payment as unapplied, never dropped.
 */
export async function insertPayment(ctx: Ctx, invoice: InvoiceRow, input: IncomingPayment): Promise<PaymentRow> {
  const applied = paymentShare(invoice, input.amountCents, input.keepExcess);
  const row: PaymentRow = {
    id: newId('pay'),
    organizationId: ctx.organizationId,
    invoiceId: invoice.id,
    amountCents: input.amountCents,
    paymentDate: input.paymentDate,
    method: input.method,
    reference: input.reference,
    status: 'succeeded',
    refundedCents: 0,
    unappliedCents: input.amountCents - applied,
    origin: input.origin,
    processorPaymentId: input.processorPaymentId,
    createdAt: new Date(),
  };
  await ctx.tx.insert(payments).values(row);
  return row;
}

/** payment.received, with the invoice as the payment left it; returns the payment's view. */
export async function announcePayment(ctx: Ctx, row: PaymentRow, invoice: InvoiceDetailView): Promise<PaymentView> {
  const payment = paymentView(row, invoice);
  await emit(ctx, 'payment.received', {
    paymentId: row.id,
    ...eventData(invoice),
    amount: fromCents(row.amountCents),
    origin: row.origin,
    payment,
  });
  return payment;
}

/**
 * Money received from elsewhere than the office (Stripe, deposits, the portal): the steps of
 * flows/record-payment.ts after its date check. `invoice` is locked FOR UPDATE by the caller.
 */
export async function receivePayment(ctx: Ctx, invoice: InvoiceRow, input: IncomingPayment): Promise<RecordedPayment> {
  const row = await insertPayment(ctx, invoice, input);
  const detail = await applyPayment(ctx, invoice, row);
  return { payment: await announcePayment(ctx, row, detail), invoice: detail };
}

export interface PaymentInput {
  amount: number;
  paymentDate?: string | undefined;
  method: PaymentMethod;
  reference?: string | undefined;
}

export interface OutgoingRefund {
  /** Cents; undefined = the whole refundable rest. */
  amountCents: number | undefined;
  reason: string | null;
  origin: RefundOrigin;
  processorRefundId: string | null;
}

export interface RecordedRefund {
  refund: RefundView;
  payment: PaymentDetailView;
  invoice: InvoiceDetailView;
}

/** The invoice a payment of this organization paid (404 when there is no such payment): what a refund locks first. */
export async function paidInvoiceId(ctx: Ctx, paymentId: string): Promise<string> {
  return (await findPayment(ctx, paymentId, false)).invoiceId;
}

/**
 * The refund of a payment: the payment locked (after its invoice, which the caller holds FOR
 * UPDATE: the order every payment path takes), so concurrent refunds queue and each sees what
 * the previous one left; the refunds of a payment never add up to more than it. The unapplied
 * excess goes back first; the rest (`appliedCents`) is the invoice's to take off amountPaid
 * (invoices' applyRefund). Returns the refund row and the payment row after it.
 */
export async function insertRefund(
  ctx: Ctx,
  paymentId: string,
  input: OutgoingRefund,
): Promise<{ refund: RefundRow; payment: PaymentRow }> {
  const payment = await findPayment(ctx, paymentId, true);
  const refundable = payment.amountCents - payment.refundedCents;
  const amount = input.amountCents ?? refundable;
  if (refundable <= 0) throw invalidField('amount', 'nothing is left to refund on this payment');
  if (amount <= 0) throw invalidField('amount', 'must be greater than 0');
  if (amount > refundable)
    throw invalidField('amount', `must not exceed the refundable rest (${fromCents(refundable)})`);

  const fromUnapplied = Math.min(amount, payment.unappliedCents);
  const refund: RefundRow = {
    id: newId('rfd'),
    organizationId: ctx.organizationId,
    paymentId,
    amountCents: amount,
    appliedCents: amount - fromUnapplied,
    reason: input.reason,
    origin: input.origin,
    processorRefundId: input.processorRefundId,
    createdAt: new Date(),
  };
  await ctx.tx.insert(paymentRefunds).values(refund);
  const refundedCents = payment.refundedCents + amount;
  const [updated] = await ctx.tx
    .update(payments)
    .set({
      refundedCents,
      unappliedCents: payment.unappliedCents - fromUnapplied,
      status: take(
        paymentMachine,
        payment.status as PaymentStatus,
        refundTriggerOf(payment.amountCents, refundedCents),
      ),
    })
    .where(and(eq(payments.organizationId, ctx.organizationId), eq(payments.id, paymentId)))
    .returning();
  return { refund, payment: updated as PaymentRow };
}

/** payment.refunded, with the payment after the refund and its invoice; returns the refund and the payment. */
export async function announceRefund(
  ctx: Ctx,
  refund: RefundRow,
  payment: PaymentRow,
  invoice: InvoiceDetailView,
): Promise<RecordedRefund> {
  const paymentAfter = await paymentDetail(ctx, payment, invoice);
  const refundOut = refundView(refund);
  await emit(ctx, 'payment.refunded', {
    paymentId: payment.id,
    invoiceId: invoice.id,
    refundId: refund.id,
    refundedAmount: fromCents(refund.amountCents),
    origin: refund.origin,
    reason: refund.reason,
    payment: paymentAfter,
    refund: refundOut,
  });
  return { refund: refundOut, payment: paymentAfter, invoice };
}

/**
 * Money given back from elsewhere than the office (Stripe's refunds): the steps of
 * flows/refund-payment.ts after its lock. `invoice` is the one the payment paid, locked FOR UPDATE.
 */
export async function refundPayment(
  ctx: Ctx,
  invoice: InvoiceRow,
  paymentId: string,
  input: OutgoingRefund,
): Promise<RecordedRefund> {
  const { refund, payment } = await insertRefund(ctx, paymentId, input);
  const detail = await applyRefund(ctx, invoice, refund);
  return announceRefund(ctx, refund, payment, detail);
}

/** The payment Stripe's PaymentIntent became, if it was recorded. */
export async function paymentByProcessorId(ctx: Ctx, processorPaymentId: string): Promise<PaymentRow | undefined> {
  const [row] = await ctx.tx
    .select()
    .from(payments)
    .where(and(eq(payments.organizationId, ctx.organizationId), eq(payments.processorPaymentId, processorPaymentId)));
  return row;
}

/** Whether a Stripe refund id was already recorded. */
export async function refundRecorded(ctx: Ctx, processorRefundId: string): Promise<boolean> {
  const [row] = await ctx.tx
    .select({ n: sql<number>`1` })
    .from(paymentRefunds)
    .where(
      and(
        eq(paymentRefunds.organizationId, ctx.organizationId),
        eq(paymentRefunds.processorRefundId, processorRefundId),
      ),
    );
  return row !== undefined;
}
