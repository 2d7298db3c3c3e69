import { sql } from 'drizzle-orm';
import {
  boolean,
  date,
  foreignKey,
  index,
  integer,
  numeric,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { cents, ts } from './column-types.js';
import { createdAt, organizationId, updatedAt } from './columns.js';
import { customers, properties, services } from './customers.js';

/*
 * Invoices, their payments, estimates and the line items of both. Money is integer
 * cents (bigint so a large document cannot overflow 32 bits); quantities are
 * numeric(15,3) so 1.125 hours stays exact. Dates are calendar dates in the
 * organization's timezone, kept as `YYYY-MM-DD` strings.
 */

const day = (name: string) => date(name, { mode: 'string' });

/**
 * One counter row per organization and document kind (`invoice`, `estimate`).
 * Incremented with an upsert … RETURNING inside the creating transaction: the row
 * lock serialises concurrent creates and a rollback gives the number back, so
 * numbers have no gaps and no duplicates.
 */
export const documentCounters = pgTable(
  'document_counters',
  {
    organizationId: organizationId(),
    kind: text('kind').notNull(),
    lastValue: integer('last_value').notNull(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.kind] })],
);

export const invoices = pgTable(
  'invoices',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    invoiceNumber: text('invoice_number').notNull(),
    customerId: text('customer_id').notNull(),
    propertyId: text('property_id'),
    /** draft | sent | partially_paid | paid | overdue | void | written_off */
    status: text('status').notNull(),
    invoiceDate: day('invoice_date').notNull(),
    dueDate: day('due_date').notNull(),
    notes: text('notes'),
    /** The rate applied (percent), frozen with the totals so later settings changes do not rewrite history. */
    taxRate: numeric('tax_rate', { precision: 6, scale: 3 }).notNull(),
    subtotalCents: cents('subtotal_cents').notNull(),
    taxCents: cents('tax_cents').notNull(),
    totalCents: cents('total_cents').notNull(),
    amountPaidCents: cents('amount_paid_cents').notNull().default(0),
    /** The estimate this invoice was converted from, if any. */
    estimateId: text('estimate_id'),
    sentAt: ts('sent_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'invoices_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'invoices_customer_id_fk',
      columns: [t.organizationId, t.customerId],
      foreignColumns: [customers.organizationId, customers.id],
    }).onDelete('cascade'),
    foreignKey({
      name: 'invoices_property_id_fk',
      columns: [t.organizationId, t.propertyId],
      foreignColumns: [properties.organizationId, properties.id],
    }),
    uniqueIndex('invoices_org_number_uq').on(t.organizationId, t.invoiceNumber),
    index('invoices_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    // Filtered lists (operations.md §1): the filter column, then the list's order.
    index('invoices_org_status_created_idx').on(t.organizationId, t.status, t.createdAt, t.id),
    index('invoices_org_customer_idx').on(t.organizationId, t.customerId, t.createdAt, t.id),
    // Date filters, and the dashboard's invoiced per range/period read from the index alone (status and total in it).
    index('invoices_org_date_idx').on(t.organizationId, t.invoiceDate, t.status, t.totalCents),
    // The dashboard's receivables and aging: open invoices by due date, balances read from the index alone.
    index('invoices_org_status_due_idx').on(t.organizationId, t.status, t.dueDate, t.totalCents, t.amountPaidCents),
    // The overdue sweep looks across organizations at open invoices only.
    index('invoices_open_due_idx').on(t.dueDate).where(sql`status IN ('sent', 'partially_paid')`),
  ],
);

/**
 * Invoices made by background billing (installments, per-visit), one per key: the key
 * row is claimed with INSERT … ON CONFLICT DO NOTHING before the invoice is numbered,
 * so two workers racing for one bill make it once and leave no gap in the numbers.
 * The key outlives a deleted draft (invoice_id null): a bill is never made twice.
 */
export const invoiceBillingKeys = pgTable(
  'invoice_billing_keys',
  {
    organizationId: organizationId(),
    key: text('key').notNull(),
    invoiceId: text('invoice_id'),
    createdAt: createdAt(),
  },
  (t) => [
    foreignKey({
      name: 'invoice_billing_keys_invoice_id_fk',
      columns: [t.organizationId, t.invoiceId],
      foreignColumns: [invoices.organizationId, invoices.id],
    }),
    primaryKey({ name: 'invoice_billing_keys_pk', columns: [t.organizationId, t.key] }),
  ],
);

export const invoiceLineItems = pgTable(
  'invoice_line_items',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    invoiceId: text('invoice_id').notNull(),
    position: integer('position').notNull(),
    serviceId: text('service_id'),
    description: text('description').notNull(),
    quantity: numeric('quantity', { precision: 15, scale: 3 }).notNull(),
    unitPriceCents: cents('unit_price_cents').notNull(),
    taxable: boolean('taxable').notNull(),
    amountCents: cents('amount_cents').notNull(),
  },
  (t) => [
    primaryKey({ name: 'invoice_line_items_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'invoice_line_items_invoice_id_fk',
      columns: [t.organizationId, t.invoiceId],
      foreignColumns: [invoices.organizationId, invoices.id],
    }).onDelete('cascade'),
    foreignKey({
      name: 'invoice_line_items_service_id_fk',
      columns: [t.organizationId, t.serviceId],
      foreignColumns: [services.organizationId, services.id],
    }),
    index('invoice_line_items_org_invoice_idx').on(t.organizationId, t.invoiceId, t.position),
  ],
);

/**
 * Every payment, however recorded (the office through the API, or Stripe). `amount`
 * is what was received; `unapplied` is the part the invoice could not take (more
 * than its balance, or a void invoice) and that still waits to be refunded or
 * applied; `refunded` is what went back. The invoice counts
 * amount − refunded − unapplied as paid.
 */
export const payments = pgTable(
  'payments',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    invoiceId: text('invoice_id').notNull(),
    amountCents: cents('amount_cents').notNull(),
    paymentDate: day('payment_date').notNull(),
    /** cash | check | card | ach | other */
    method: text('method').notNull(),
    /** Cheque number, transfer reference, … as the office typed it. */
    reference: text('reference'),
    /** succeeded | partially_refunded | refunded (follows refundedCents). */
    status: text('status').notNull().default('succeeded'),
    refundedCents: cents('refunded_cents').notNull().default(0),
    unappliedCents: cents('unapplied_cents').notNull().default(0),
    /** API | STRIPE */
    origin: text('origin').notNull().default('API'),
    /** Stripe's PaymentIntent id (pi_…): one payment per intent, whatever Stripe replays. */
    processorPaymentId: text('processor_payment_id'),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ name: 'payments_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'payments_invoice_id_fk',
      columns: [t.organizationId, t.invoiceId],
      foreignColumns: [invoices.organizationId, invoices.id],
    }).onDelete('cascade'),
    index('payments_org_invoice_idx').on(t.organizationId, t.invoiceId, t.createdAt),
    index('payments_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    // The dashboard's money collected in a date range.
    index('payments_org_date_idx').on(t.organizationId, t.paymentDate, t.amountCents),
    index('payments_org_unapplied_idx').on(t.organizationId, t.createdAt, t.id).where(sql`unapplied_cents > 0`),
    uniqueIndex('payments_org_processor_uq').on(t.organizationId, t.processorPaymentId),
  ],
);

/** Money given back on a payment, from the API or from the Stripe dashboard. */
export const paymentRefunds = pgTable(
  'payment_refunds',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    paymentId: text('payment_id').notNull(),
    amountCents: cents('amount_cents').notNull(),
    /** The part taken back from the invoice's amountPaid (the rest came out of the unapplied excess). */
    appliedCents: cents('applied_cents').notNull(),
    reason: text('reason'),
    /** API | STRIPE_DASHBOARD */
    origin: text('origin').notNull(),
    /** Stripe's Refund id (re_…): one refund per id, whichever event brings it first. */
    processorRefundId: text('processor_refund_id'),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ name: 'payment_refunds_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'payment_refunds_payment_id_fk',
      columns: [t.organizationId, t.paymentId],
      foreignColumns: [payments.organizationId, payments.id],
    }).onDelete('cascade'),
    index('payment_refunds_org_payment_idx').on(t.organizationId, t.paymentId, t.createdAt),
    // The dashboard's refunds made in a range.
    index('payment_refunds_org_created_idx').on(t.organizationId, t.createdAt),
    uniqueIndex('payment_refunds_org_processor_uq').on(t.organizationId, t.processorRefundId),
  ],
);

export const estimates = pgTable(
  'estimates',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    estimateNumber: text('estimate_number').notNull(),
    customerId: text('customer_id').notNull(),
    propertyId: text('property_id'),
    /** draft | sent | viewed | approved | declined | expired | converted */
    status: text('status').notNull(),
    estimateDate: day('estimate_date').notNull(),
    expirationDate: day('expiration_date').notNull(),
    notes: text('notes'),
    taxRate: numeric('tax_rate', { precision: 6, scale: 3 }).notNull(),
    subtotalCents: cents('subtotal_cents').notNull(),
    taxCents: cents('tax_cents').notNull(),
    totalCents: cents('total_cents').notNull(),
    /** The invoice created by converting this estimate. */
    invoiceId: text('invoice_id'),
    /** The job made from this estimate (POST /convert-to-job); composite FK in SQL only, drizzle/0035 (jobs.ts imports this file). */
    jobId: text('job_id'),
    sentAt: ts('sent_at'),
    viewedAt: ts('viewed_at'),
    approvedAt: ts('approved_at'),
    declinedAt: ts('declined_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'estimates_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'estimates_customer_id_fk',
      columns: [t.organizationId, t.customerId],
      foreignColumns: [customers.organizationId, customers.id],
    }).onDelete('cascade'),
    foreignKey({
      name: 'estimates_property_id_fk',
      columns: [t.organizationId, t.propertyId],
      foreignColumns: [properties.organizationId, properties.id],
    }),
    foreignKey({
      name: 'estimates_invoice_id_fk',
      columns: [t.organizationId, t.invoiceId],
      foreignColumns: [invoices.organizationId, invoices.id],
    }),
    uniqueIndex('estimates_org_number_uq').on(t.organizationId, t.estimateNumber),
    index('estimates_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    index('estimates_org_status_created_idx').on(t.organizationId, t.status, t.createdAt, t.id),
    index('estimates_org_customer_idx').on(t.organizationId, t.customerId, t.createdAt, t.id),
    // The dashboard's estimates first sent in a range.
    index('estimates_org_sent_idx').on(t.organizationId, t.sentAt).where(sql`sent_at IS NOT NULL`),
    index('estimates_open_expiry_idx').on(t.expirationDate).where(sql`status IN ('sent', 'viewed')`),
  ],
);

export const estimateLineItems = pgTable(
  'estimate_line_items',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    estimateId: text('estimate_id').notNull(),
    position: integer('position').notNull(),
    serviceId: text('service_id'),
    description: text('description').notNull(),
    quantity: numeric('quantity', { precision: 15, scale: 3 }).notNull(),
    unitPriceCents: cents('unit_price_cents').notNull(),
    taxable: boolean('taxable').notNull(),
    amountCents: cents('amount_cents').notNull(),
  },
  (t) => [
    primaryKey({ name: 'estimate_line_items_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'estimate_line_items_estimate_id_fk',
      columns: [t.organizationId, t.estimateId],
      foreignColumns: [estimates.organizationId, estimates.id],
    }).onDelete('cascade'),
    foreignKey({
      name: 'estimate_line_items_service_id_fk',
      columns: [t.organizationId, t.serviceId],
      foreignColumns: [services.organizationId, services.id],
    }),
    index('estimate_line_items_org_estimate_idx').on(t.organizationId, t.estimateId, t.position),
  ],
);
