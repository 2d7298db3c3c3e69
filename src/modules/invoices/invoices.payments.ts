import { and, eq } from 'drizzle-orm';
import { invoices, type payments } from '../../db/schema/index.js';
import { today } from '../../platform/dates.js';
import { invalidField, invalidState } from '../../platform/errors.js';
import { fromCents } from '../../platform/money.js';
import { take, withArticle } from '../../platform/state-machine.js';
import type { Ctx } from '../../platform/tenancy.js';
import { getOrgSettings } from '../settings/settings.service.js';
import { postInvoiceIssued, postInvoicePayment, postPaymentRefund } from './invoices.ledger.js';
import {
  balanceCents,
  detailOf,
  emitInvoiceTransition,
  type InvoiceDetailView,
  type InvoiceRow,
} from './invoices.service.js';
import {
  acceptsPayment,
  type InvoiceStatus,
  type InvoiceTrigger,
  invoiceMachine,
  refundTrigger,
} from './invoices.transitions.js';

/*
 * How money received and given back changes an invoice, each a single call: its amountPaid
 * and, through the invoice machine, its status; its ledger entries; its invoice.* events.
 * The invoices module owns the invoices table and the ledger postings of an invoice, so the
 * payments module (recording, refunding, Stripe, deposits) moves an invoice only through these.
 * The caller holds the invoice FOR UPDATE (findRow(ctx, id, true)), so concurrent payments queue.
 */

type PaymentRow = typeof payments.$inferSelect;

/**
 * The part of `amountCents` (> 0) the invoice takes. `keepExcess` false (the office through
 * the API): a closed invoice is a 409 and more than the balance a 400. true (a processor that
 * already took the money): the part the invoice cannot take is the caller's to keep as unapplied.
 */
export function paymentShare(invoice: InvoiceRow, amountCents: number, keepExcess: boolean): number {
  const status = invoice.status as InvoiceStatus;
  const open = acceptsPayment(status);
  if (!open && !keepExcess) throw invalidState(`Cannot record a payment on ${withArticle(`${status} invoice`)}`);
  if (amountCents <= 0) throw invalidField('amount', 'must be greater than 0');
  const balance = open ? balanceCents(invoice) : 0;
  if (!keepExcess && amountCents > balance) {
    throw invalidField('amount', `must not exceed the balance (${fromCents(balance)})`);
  }
  return Math.min(amountCents, balance);
}

/**
 * A recorded payment reaches its invoice: the applied part (amount less unapplied) moves
 * amountPaid and the status (partial_payment, or full_payment when it clears the balance);
 * the ledger posts it (an invoice paid straight from draft enters receivables first); the
 * invoice's own events follow. Returns the invoice as the payment left it.
 */
export async function applyPayment(ctx: Ctx, invoice: InvoiceRow, payment: PaymentRow): Promise<InvoiceDetailView> {
  const applied = payment.amountCents - payment.unappliedCents;
  let current = invoice;
  let trigger: InvoiceTrigger | undefined;
  if (applied > 0) {
    trigger = applied === balanceCents(invoice) ? 'full_payment' : 'partial_payment';
    current = await move(ctx, invoice, trigger, invoice.amountPaidCents + applied);
    if (invoice.status === 'draft') await postInvoiceIssued(ctx, current, payment.origin === 'STRIPE');
  }
  await postInvoicePayment(ctx, invoice, payment);
  const detail = await detailOf(ctx, current);
  if (trigger) await emitInvoiceTransition(ctx, trigger, invoice.status, detail);
  return detail;
}

/**
 * A recorded refund reaches its invoice: its applied part (what the invoice had received) comes
 * off amountPaid, the status following the refund triggers (overdue when past due in the
 * organization's timezone); the ledger posts it; the invoice's own events follow.
 */
export async function applyRefund(
  ctx: Ctx,
  invoice: InvoiceRow,
  refund: { id: string; amountCents: number; appliedCents: number; origin?: string | undefined },
): Promise<InvoiceDetailView> {
  let current = invoice;
  let trigger: InvoiceTrigger | undefined;
  if (refund.appliedCents > 0) {
    const { timezone } = await getOrgSettings(ctx);
    const paidAfter = invoice.amountPaidCents - refund.appliedCents;
    trigger = refundTrigger(paidAfter, invoice.dueDate < today(timezone));
    current = await move(ctx, invoice, trigger, paidAfter);
  }
  await postPaymentRefund(ctx, invoice, refund);
  const detail = await detailOf(ctx, current);
  if (trigger) await emitInvoiceTransition(ctx, trigger, invoice.status, detail);
  return detail;
}

async function move(
  ctx: Ctx,
  invoice: InvoiceRow,
  trigger: InvoiceTrigger,
  amountPaidCents: number,
): Promise<InvoiceRow> {
  const [updated] = await ctx.tx
    .update(invoices)
    .set({
      status: take(invoiceMachine, invoice.status as InvoiceStatus, trigger),
      amountPaidCents,
      updatedAt: new Date(),
    })
    .where(and(eq(invoices.organizationId, ctx.organizationId), eq(invoices.id, invoice.id)))
    .returning();
  return updated as InvoiceRow;
}
