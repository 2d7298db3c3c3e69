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
    id: text('id').notNull(),
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
  (t) => [
    primaryKey({ name: 'vendors_pkey', columns: [t.organizationId, t.id] }),
    index('vendors_org_created_idx').on(t.organizationId, t.createdAt, t.id),
  ],
);

export const purchaseOrders = pgTable(
  'purchase_orders',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    poNumber: text('po_number').notNull(),
    vendorId: text('vendor_id').notNull(),
    jobId: text('job_id'),
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
    primaryKey({ name: 'purchase_orders_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'purchase_orders_vendor_id_fk',
      columns: [t.organizationId, t.vendorId],
      foreignColumns: [vendors.organizationId, vendors.id],
    }).onDelete('restrict'),
    foreignKey({
      name: 'purchase_orders_job_id_fk',
      columns: [t.organizationId, t.jobId],
      foreignColumns: [jobs.organizationId, jobs.id],
    }),
    uniqueIndex('purchase_orders_org_number_uq').on(t.organizationId, t.poNumber),
    index('purchase_orders_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    index('purchase_orders_org_vendor_idx').on(t.organizationId, t.vendorId, t.createdAt, t.id),
  ],
);

export const purchaseOrderLines = pgTable(
  'purchase_order_lines',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    purchaseOrderId: text('purchase_order_id').notNull(),
    position: integer('position').notNull(),
    description: text('description').notNull(),
    quantity: numeric('quantity', { precision: 15, scale: 3 }).notNull(),
    unitCostCents: cents('unit_cost_cents').notNull(),
    amountCents: cents('amount_cents').notNull(),
    /** Equipment the material is for; a plain reference (the equipment module owns that table). */
    equipmentId: text('equipment_id'),
  },
  (t) => [
    primaryKey({ name: 'purchase_order_lines_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'purchase_order_lines_purchase_order_id_fk',
      columns: [t.organizationId, t.purchaseOrderId],
      foreignColumns: [purchaseOrders.organizationId, purchaseOrders.id],
    }).onDelete('cascade'),
    index('purchase_order_lines_org_po_idx').on(t.organizationId, t.purchaseOrderId, t.position),
  ],
);

export const bills = pgTable(
  'bills',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    billNumber: text('bill_number').notNull(),
    vendorId: text('vendor_id').notNull(),
    purchaseOrderId: text('purchase_order_id'),
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
    primaryKey({ name: 'bills_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'bills_vendor_id_fk',
      columns: [t.organizationId, t.vendorId],
      foreignColumns: [vendors.organizationId, vendors.id],
    }).onDelete('restrict'),
    foreignKey({
      name: 'bills_purchase_order_id_fk',
      columns: [t.organizationId, t.purchaseOrderId],
      foreignColumns: [purchaseOrders.organizationId, purchaseOrders.id],
    }),
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
    id: text('id').notNull(),
    organizationId: organizationId(),
    billId: text('bill_id').notNull(),
    position: integer('position').notNull(),
    description: text('description').notNull(),
    amountCents: cents('amount_cents').notNull(),
    /** The expense account debited when the bill is posted (chart in modules/ledger). */
    accountCode: text('account_code').notNull(),
  },
  (t) => [
    primaryKey({ name: 'bill_lines_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'bill_lines_bill_id_fk',
      columns: [t.organizationId, t.billId],
      foreignColumns: [bills.organizationId, bills.id],
    }).onDelete('cascade'),
    index('bill_lines_org_bill_idx').on(t.organizationId, t.billId, t.position),
  ],
);

export const billPayments = pgTable(
  'bill_payments',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    vendorId: text('vendor_id').notNull(),
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
    primaryKey({ name: 'bill_payments_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'bill_payments_vendor_id_fk',
      columns: [t.organizationId, t.vendorId],
      foreignColumns: [vendors.organizationId, vendors.id],
    }).onDelete('restrict'),
    index('bill_payments_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    index('bill_payments_org_vendor_idx').on(t.organizationId, t.vendorId, t.createdAt, t.id),
    // The worker's sweep looks across organizations at scheduled payments only.
    index('bill_payments_scheduled_idx').on(t.paymentDate).where(sql`status = 'scheduled'`),
  ],
);

export const billPaymentAllocations = pgTable(
  'bill_payment_allocations',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    billPaymentId: text('bill_payment_id').notNull(),
    billId: text('bill_id').notNull(),
    position: integer('position').notNull(),
    amountCents: cents('amount_cents').notNull(),
  },
  (t) => [
    primaryKey({ name: 'bill_payment_allocations_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'bill_payment_allocations_bill_payment_id_fk',
      columns: [t.organizationId, t.billPaymentId],
      foreignColumns: [billPayments.organizationId, billPayments.id],
    }).onDelete('cascade'),
    foreignKey({
      name: 'bill_payment_allocations_bill_id_fk',
      columns: [t.organizationId, t.billId],
      foreignColumns: [bills.organizationId, bills.id],
    }).onDelete('restrict'),
    index('bill_payment_allocations_org_payment_idx').on(t.organizationId, t.billPaymentId, t.position),
    index('bill_payment_allocations_org_bill_idx').on(t.organizationId, t.billId),
  ],
);
