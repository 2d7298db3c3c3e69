import { sql } from 'drizzle-orm';
import { boolean, date, index, integer, numeric, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { cents, ts } from './column-types.js';
import { createdAt, organizationId, updatedAt } from './columns.js';
import { jobs } from './jobs.js';

/*
 * Payables: vendors, purchase orders, vendor bills and the payments that settle
 * them (operations.md §3). Money is integer cents; dates are calendar dates in the
 * organization's timezone. Vendors are referenced with ON DELETE RESTRICT so a
 * vendor with documents cannot disappear from under them (409, set inactive).
 */

const day = (name: string) => date(name, { mode: 'string' });

export const vendors = pgTable(
  'vendors',
  {
    id: text('id').primaryKey(),
    organizationId: organizationId(),
    name: text('name').notNull(),
    email: text('email'),
    phone: text('phone'),
    address: text('address'),
    /** Null: the organization's paymentTermsDays applies. */
    paymentTermsDays: integer('payment_terms_days'),
    notes: text('notes'),
    active: boolean('active').notNull().default(true),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('vendors_org_created_idx').on(t.organizationId, t.createdAt, t.id)],
);

export const purchaseOrders = pgTable(
  'purchase_orders',
  {
    id: text('id').primaryKey(),
    organizationId: organizationId(),
    poNumber: text('po_number').notNull(),
    vendorId: text('vendor_id')
      .notNull()
      .references(() => vendors.id, { onDelete: 'restrict' }),
    jobId: text('job_id').references(() => jobs.id, { onDelete: 'set null' }),
    /** draft | sent | received | cancelled */
    status: text('status').notNull(),
    orderDate: day('order_date').notNull(),
    expectedDate: day('expected_date'),
    notes: text('notes'),
    totalCents: cents('total_cents').notNull(),
    /** The bill made from this order (POST /{id}/bill), at most one. */
    billId: text('bill_id'),
    sentAt: ts('sent_at'),
    receivedAt: ts('received_at'),
    cancelledAt: ts('cancelled_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('purchase_orders_org_number_uq').on(t.organizationId, t.poNumber),
    index('purchase_orders_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    index('purchase_orders_org_vendor_idx').on(t.organizationId, t.vendorId, t.createdAt, t.id),
  ],
);

export const purchaseOrderLines = pgTable(
  'purchase_order_lines',
  {
    id: text('id').primaryKey(),
    organizationId: organizationId(),
    purchaseOrderId: text('purchase_order_id')
      .notNull()
      .references(() => purchaseOrders.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
    description: text('description').notNull(),
    quantity: numeric('quantity', { precision: 15, scale: 3 }).notNull(),
    unitCostCents: cents('unit_cost_cents').notNull(),
    amountCents: cents('amount_cents').notNull(),
    /** Equipment the material is for; a plain reference (the equipment module owns that table). */
    equipmentId: text('equipment_id'),
  },
  (t) => [index('purchase_order_lines_org_po_idx').on(t.organizationId, t.purchaseOrderId, t.position)],
);

export const bills = pgTable(
  'bills',
  {
    id: text('id').primaryKey(),
    organizationId: organizationId(),
    billNumber: text('bill_number').notNull(),
    vendorId: text('vendor_id')
      .notNull()
      .references(() => vendors.id, { onDelete: 'restrict' }),
    purchaseOrderId: text('purchase_order_id').references(() => purchaseOrders.id, { onDelete: 'set null' }),
    vendorReference: text('vendor_reference'),
    /** draft | awaiting_approval | open | partially_paid | paid | void */
    status: text('status').notNull(),
    billDate: day('bill_date').notNull(),
    dueDate: day('due_date').notNull(),
    notes: text('notes'),
    totalCents: cents('total_cents').notNull(),
    amountPaidCents: cents('amount_paid_cents').notNull().default(0),
    postedAt: ts('posted_at'),
    approvedAt: ts('approved_at'),
    approvedBy: text('approved_by'),
    voidedAt: ts('voided_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('bills_org_number_uq').on(t.organizationId, t.billNumber),
    index('bills_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    index('bills_org_vendor_idx').on(t.organizationId, t.vendorId, t.createdAt, t.id),
    // The dashboard's payables: open bills by due date.
    index('bills_org_status_due_idx').on(t.organizationId, t.status, t.dueDate, t.totalCents, t.amountPaidCents),
  ],
);

export const billLines = pgTable(
  'bill_lines',
  {
    id: text('id').primaryKey(),
    organizationId: organizationId(),
    billId: text('bill_id')
      .notNull()
      .references(() => bills.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
    description: text('description').notNull(),
    amountCents: cents('amount_cents').notNull(),
    /** The expense account debited when the bill is posted (chart in modules/ledger). */
    accountCode: text('account_code').notNull(),
  },
  (t) => [index('bill_lines_org_bill_idx').on(t.organizationId, t.billId, t.position)],
);

export const billPayments = pgTable(
  'bill_payments',
  {
    id: text('id').primaryKey(),
    organizationId: organizationId(),
    vendorId: text('vendor_id')
      .notNull()
      .references(() => vendors.id, { onDelete: 'restrict' }),
    /** check | ach | card | cash | other */
    method: text('method').notNull(),
    paymentDate: day('payment_date').notNull(),
    reference: text('reference'),
    /** scheduled | pending | settled | failed */
    status: text('status').notNull(),
    amountCents: cents('amount_cents').notNull(),
    failureReason: text('failure_reason'),
    settledAt: ts('settled_at'),
    failedAt: ts('failed_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('bill_payments_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    index('bill_payments_org_vendor_idx').on(t.organizationId, t.vendorId, t.createdAt, t.id),
    // The worker's sweep looks across organizations at scheduled payments only.
    index('bill_payments_scheduled_idx').on(t.paymentDate).where(sql`status = 'scheduled'`),
  ],
);

export const billPaymentAllocations = pgTable(
  'bill_payment_allocations',
  {
    id: text('id').primaryKey(),
    organizationId: organizationId(),
    billPaymentId: text('bill_payment_id')
      .notNull()
      .references(() => billPayments.id, { onDelete: 'cascade' }),
    billId: text('bill_id')
      .notNull()
      .references(() => bills.id, { onDelete: 'restrict' }),
    position: integer('position').notNull(),
    amountCents: cents('amount_cents').notNull(),
  },
  (t) => [
    index('bill_payment_allocations_org_payment_idx').on(t.organizationId, t.billPaymentId, t.position),
    index('bill_payment_allocations_org_bill_idx').on(t.organizationId, t.billId),
  ],
);
