import { and, eq } from 'drizzle-orm';
import { invoices } from '../../db/schema/index.js';
import { take } from '../../platform/state-machine.js';
import type { Ctx } from '../../platform/tenancy.js';
import type { InvoiceRow } from './invoices.service.js';
import { type InvoiceStatus, type InvoiceTrigger, invoiceMachine, refundTrigger } from './invoices.transitions.js';

/*
 * How money received and given back changes an invoice: its amountPaid and, through the
 * invoice machine, its status. The invoices module owns the invoices table, so payments
 * (recording, refunding, Stripe, deposits) move an invoice only through these two. The
 * caller holds the invoice FOR UPDATE (findRow(ctx, id, true)), so concurrent payments queue.
 */

export interface InvoiceMoved {
  /** The invoice row after the change. */
  invoice: InvoiceRow;
  /** The trigger the invoice took; emit it with emitInvoiceTransition. */
  trigger: InvoiceTrigger;
}

/** Applies `appliedCents` (> 0, at most the balance) of a payment: partial_payment, or full_payment when it clears the balance. */
export async function applyPayment(ctx: Ctx, invoice: InvoiceRow, appliedCents: number, balance: number) {
  const trigger: InvoiceTrigger = appliedCents === balance ? 'full_payment' : 'partial_payment';
  return move(ctx, invoice, trigger, invoice.amountPaidCents + appliedCents);
}

/** Takes `cents` (> 0) of refunded money off amountPaid; `pastDue` picks the refund trigger that lands on overdue. */
export async function reversePayment(ctx: Ctx, invoice: InvoiceRow, cents: number, pastDue: boolean) {
  const paidAfter = invoice.amountPaidCents - cents;
  return move(ctx, invoice, refundTrigger(paidAfter, pastDue), paidAfter);
}

async function move(
  ctx: Ctx,
  invoice: InvoiceRow,
  trigger: InvoiceTrigger,
  amountPaidCents: number,
): Promise<InvoiceMoved> {
  const [updated] = await ctx.tx
    .update(invoices)
    .set({
      status: take(invoiceMachine, invoice.status as InvoiceStatus, trigger),
      amountPaidCents,
      updatedAt: new Date(),
    })
    .where(and(eq(invoices.organizationId, ctx.organizationId), eq(invoices.id, invoice.id)))
    .returning();
  return { invoice: updated as InvoiceRow, trigger };
}
