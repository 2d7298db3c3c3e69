import { sql } from 'drizzle-orm';
import { bigint, boolean, date, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { invoices } from './billing.js';
import { createdAt, organizationId, updatedAt } from './columns.js';
import { customers, properties } from './customers.js';

/**
 * Jobs (spec 2.4). `assigned_to` is a text[] of member user ids with a GIN index:
 * the filter `assignedTo=<userId>` becomes `assigned_to @> ARRAY[id]`, one index
 * probe, and the job row stays a single row (no join table to keep in step for a
 * list that is read far more often than it is written). User ids are globally
 * unique, so the GIN index is selective without the organization in front.
 */
/** One stored job line: money in cents, quantity as the exact decimal string (as invoice lines store it). */
export interface StoredJobLine {
  serviceId: string | null;
  description: string;
  quantity: string;
  unitPriceCents: number;
  taxable: boolean;
  amountCents: number;
}

export const jobs = pgTable(
  'jobs',
  {
    id: text('id').primaryKey(),
    organizationId: organizationId(),
    customerId: text('customer_id')
      .notNull()
      .references(() => customers.id, { onDelete: 'cascade' }),
    propertyId: text('property_id').references(() => properties.id, { onDelete: 'set null' }),
    /** draft | scheduled | in_progress | on_hold | completed | canceled */
    status: text('status').notNull(),
    scheduledDate: date('scheduled_date', { mode: 'string' }).notNull(),
    assignedTo: text('assigned_to').array().notNull().default(sql`'{}'::text[]`),
    services: text('services').array().notNull().default(sql`'{}'::text[]`),
    notes: text('notes'),
    /** When the job moved to completed (the dashboard's "completed in range"); null otherwise. */
    completedAt: timestamp('completed_at', { withTimezone: true, mode: 'date' }),
    /**
     * The priced lines (operations.md §9), priced by the invoices' line code and kept
     * with the job as one value: they are read and written with the job, never alone.
     */
    lineItems: jsonb('line_items').$type<StoredJobLine[]>().notNull().default(sql`'[]'::jsonb`),
    /** Σ line amounts, in cents (no tax: tax is the invoice's, at billing time). */
    totalCents: bigint('total_cents', { mode: 'number' }).notNull().default(0),
    /** The invoice that billed this job; null until billed (a deleted draft invoice frees it). */
    invoiceId: text('invoice_id').references(() => invoices.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    // The list's default order and the calendar's date range both walk this index.
    index('jobs_org_date_idx').on(t.organizationId, t.scheduledDate, t.createdAt, t.id),
    index('jobs_org_status_date_idx').on(t.organizationId, t.status, t.scheduledDate, t.createdAt, t.id),
    index('jobs_org_customer_date_idx').on(t.organizationId, t.customerId, t.scheduledDate, t.createdAt, t.id),
    index('jobs_assigned_to_idx').using('gin', t.assignedTo),
    // The dashboard's jobs completed in a range.
    index('jobs_org_completed_idx').on(t.organizationId, t.completedAt).where(sql`${t.completedAt} IS NOT NULL`),
    // Batch invoicing: completed, not yet billed jobs by completion time.
    index('jobs_org_unbilled_completed_idx')
      .on(t.organizationId, t.completedAt)
      .where(sql`status = 'completed' AND invoice_id IS NULL`),
    index('jobs_invoice_idx').on(t.invoiceId).where(sql`invoice_id IS NOT NULL`),
  ],
);

export const jobChecklistItems = pgTable(
  'job_checklist_items',
  {
    id: text('id').primaryKey(),
    organizationId: organizationId(),
    jobId: text('job_id')
      .notNull()
      .references(() => jobs.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
    text: text('text').notNull(),
    completed: boolean('completed').notNull().default(false),
    completedAt: timestamp('completed_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
  },
  (t) => [index('job_checklist_org_job_idx').on(t.organizationId, t.jobId, t.position)],
);

/** The job's history, one row per change, written in the transaction of the change. */
export const jobActivity = pgTable(
  'job_activity',
  {
    id: text('id').primaryKey(),
    organizationId: organizationId(),
    jobId: text('job_id')
      .notNull()
      .references(() => jobs.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
    message: text('message').notNull(),
    /** User or API key id; null for the system. */
    actorId: text('actor_id'),
    createdAt: createdAt(),
  },
  (t) => [index('job_activity_org_job_idx').on(t.organizationId, t.jobId, t.createdAt, t.id)],
);
