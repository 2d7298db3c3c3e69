import { and, asc, eq, inArray } from 'drizzle-orm';
import type { WorkerTask } from '../../background/runner.js';
import type { Database } from '../../db/client.js';
import { invoices, paymentIntents } from '../../db/schema/index.js';
import { asPlatform } from '../../platform/cross-tenant.js';
import { inTenant, systemActor } from '../../platform/tenancy.js';
import { acceptsPayment, invoiceMachine } from '../invoices/invoices.transitions.js';
import { cancelIntentOfClosedInvoice } from './intents/payment-intents.service.js';
import { type StripeDeps, stripeDeps } from './stripe/stripe-client.js';

const BATCH = 50;
/**
 * Invoices that take no more payments (paid, void, written off): what the office
 * recorded, voided or wrote off closed them. Read from the invoice machine.
 */
const CLOSED_INVOICE_STATUSES = invoiceMachine.states.filter((s) => !acceptsPayment(s));

/**
 * Open intents (waiting for the customer) of invoices closed otherwise: cash or check
 * took the balance, or the invoice was voided or written off. The invoice's change and
 * its events commit first, never waiting on Stripe; this sweep then cancels the intents
 * at Stripe and here, so the customer's link can no longer charge the card. It runs
 * every minute and as soon as any event commits (the outbox's NOTIFY wakes the worker),
 * least recently touched first, so an intent Stripe refuses to cancel does not hold up
 * the others. Cross-tenant only to find candidates; each cancel runs in its organization.
 */
export async function cancelIntentsOfClosedInvoices(database: Database, deps: StripeDeps): Promise<number> {
  const due = await asPlatform(database.db, (tx) =>
    tx
      .select({ id: paymentIntents.id, organizationId: paymentIntents.organizationId })
      .from(paymentIntents)
      .innerJoin(
        invoices,
        and(eq(invoices.organizationId, paymentIntents.organizationId), eq(invoices.id, paymentIntents.invoiceId)),
      )
      .where(
        and(eq(paymentIntents.status, 'requires_payment_method'), inArray(invoices.status, CLOSED_INVOICE_STATUSES)),
      )
      .orderBy(asc(paymentIntents.updatedAt))
      .limit(BATCH),
  );
  let canceled = 0;
  for (const intent of due) {
    const run = <T>(fn: Parameters<typeof inTenant<T>>[3]) =>
      inTenant(database.db, intent.organizationId, systemActor('payments.close-intents'), fn);
    if (await cancelIntentOfClosedInvoice(run, deps, intent.id)) canceled++;
  }
  return canceled;
}

export const paymentTasks: WorkerTask[] = [
  {
    name: 'payments.close-intents',
    intervalMs: 60_000,
    run: (t) => cancelIntentsOfClosedInvoices(t.database, stripeDeps(t.config)),
  },
];
