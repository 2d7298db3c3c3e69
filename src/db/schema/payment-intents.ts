import { sql } from 'drizzle-orm';
import { date, foreignKey, index, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { invoices, payments } from './billing.js';
import { cents } from './column-types.js';
import { createdAt, organizationId, updatedAt } from './columns.js';

/*
 * Issue 19: card payments started here (Stripe PaymentIntents) and the deposits that
 * group money which reached the bank (reconciliation). Money is integer cents.
 */

/**
 * A Stripe PaymentIntent created for an invoice, from the API or the portal. Its status
 * follows Stripe's events; `payment_intent.succeeded` records the payment (linked here).
 */
export const paymentIntents = pgTable(
  'payment_intents',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    invoiceId: text('invoice_id').notNull(),
    amountCents: cents('amount_cents').notNull(),
    /** ISO 4217, upper case (the organization's currency when created). */
    currency: text('currency').notNull(),
    /** requires_payment_method | processing | succeeded | canceled */
    status: text('status').notNull(),
    /**
     * Stripe's PaymentIntent id (pi_…). Null only while a portal intent is being created
     * at Stripe: the row reserves the invoice's one open portal intent first (see the
     * partial unique index), and is filled in once Stripe answered.
     */
    processorIntentId: text('processor_intent_id'),
    /** What the browser confirms the card payment with (Stripe.js). */
    clientSecret: text('client_secret'),
    /** API | PORTAL */
    source: text('source').notNull(),
    /** The last payment error Stripe reported (payment_intent.payment_failed). */
    lastError: text('last_error'),
    /** The payment recorded when it succeeded. */
    paymentId: text('payment_id'),
    /** `created` of the Stripe event that last moved the status, so an older event never moves it back. */
    statusEventAt: timestamp('status_event_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'payment_intents_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'payment_intents_invoice_id_fk',
      columns: [t.organizationId, t.invoiceId],
      foreignColumns: [invoices.organizationId, invoices.id],
    }).onDelete('cascade'),
    foreignKey({
      name: 'payment_intents_payment_id_fk',
      columns: [t.organizationId, t.paymentId],
      foreignColumns: [payments.organizationId, payments.id],
    }),
    index('payment_intents_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    index('payment_intents_org_invoice_idx').on(t.organizationId, t.invoiceId, t.createdAt, t.id),
    index('payment_intents_org_status_idx').on(t.organizationId, t.status, t.createdAt, t.id),
    uniqueIndex('payment_intents_org_processor_uq').on(t.organizationId, t.processorIntentId),
    // At most one open portal intent per invoice: concurrent pay calls from the link converge on it.
    uniqueIndex('payment_intents_portal_open_uq')
      .on(t.organizationId, t.invoiceId)
      .where(sql`source = 'PORTAL' AND status IN ('requires_payment_method', 'processing')`),
    // The sweep that cancels open intents of invoices closed otherwise (cash, check, void, write-off).
    index('payment_intents_open_idx').on(t.updatedAt).where(sql`status = 'requires_payment_method'`),
  ],
);

/**
 * Money that reached the bank: a cash/check run the office deposited (MANUAL) or a
 * Stripe payout (STRIPE_PAYOUT, from `payout.paid`). `amount` is what the bank received.
 */
export const deposits = pgTable(
  'deposits',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    depositDate: date('deposit_date', { mode: 'string' }).notNull(),
    reference: text('reference'),
    amountCents: cents('amount_cents').notNull(),
    /** MANUAL | STRIPE_PAYOUT */
    origin: text('origin').notNull(),
    /** Stripe's Payout id (po_…): one deposit per payout, whatever Stripe replays. */
    processorPayoutId: text('processor_payout_id'),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ name: 'deposits_pkey', columns: [t.organizationId, t.id] }),
    index('deposits_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    index('deposits_org_date_idx').on(t.organizationId, t.depositDate),
    uniqueIndex('deposits_org_payout_uq').on(t.organizationId, t.processorPayoutId),
  ],
);

/** Which payments a deposit holds. The unique (organization, payment) keeps a payment in one deposit. */
export const depositPayments = pgTable(
  'deposit_payments',
  {
    organizationId: organizationId(),
    depositId: text('deposit_id').notNull(),
    paymentId: text('payment_id').notNull(),
    /** The payment's amount when deposited. */
    amountCents: cents('amount_cents').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    foreignKey({
      name: 'deposit_payments_deposit_id_fk',
      columns: [t.organizationId, t.depositId],
      foreignColumns: [deposits.organizationId, deposits.id],
    }).onDelete('cascade'),
    foreignKey({
      name: 'deposit_payments_payment_id_fk',
      columns: [t.organizationId, t.paymentId],
      foreignColumns: [payments.organizationId, payments.id],
    }).onDelete('cascade'),
    primaryKey({ name: 'deposit_payments_pkey', columns: [t.organizationId, t.depositId, t.paymentId] }),
    uniqueIndex('deposit_payments_org_payment_uq').on(t.organizationId, t.paymentId),
    index('deposit_payments_org_deposit_idx').on(t.organizationId, t.depositId),
  ],
);

/**
 * Payouts Stripe reported failed (`payout.failed`, the bank returned the money). Kept so
 * that a `payout.paid` of the same payout arriving later (Stripe does not guarantee
 * order) records no deposit: a failed payout is final at Stripe.
 */
export const failedPayouts = pgTable(
  'failed_payouts',
  {
    organizationId: organizationId(),
    processorPayoutId: text('processor_payout_id').notNull(),
    failureCode: text('failure_code'),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.processorPayoutId] })],
);
