import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  date,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { invoices } from './billing.js';
import { createdAt, organizationId, updatedAt } from './columns.js';
import { contracts } from './contracts.js';
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
    id: text('id').notNull(),
    organizationId: organizationId(),
    customerId: text('customer_id').notNull(),
    propertyId: text('property_id'),
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
    invoiceId: text('invoice_id'),
    /** HH:mm in the organization's timezone; null = any time that day. */
    startTime: text('start_time'),
    /** scheduled_date at start_time in the organization's timezone, as an instant (kept by SQL on write). */
    startsAt: timestamp('starts_at', { withTimezone: true, mode: 'date' }),
    durationMinutes: integer('duration_minutes'),
    // FK (organization_id, crew_id) to crews (NO ACTION, drizzle/0038: deleting a crew clears it), declared in SQL
    // only: crew-tracking's schema imports this file (time entries name a job), and a value import back would be a cycle.
    crewId: text('crew_id'),
    /** The schedule this visit came from (null for a one-off job). */
    scheduleId: text('schedule_id'),
    /** The schedule's occurrence date it was made for; unique with schedule_id, so each visit is made once. */
    occurrenceDate: date('occurrence_date', { mode: 'string' }),
    reminderSentAt: timestamp('reminder_sent_at', { withTimezone: true, mode: 'date' }),
    routeOrder: integer('route_order'),
    /** Set when a visit is changed through /api/jobs/{id}: schedule edits then leave it alone. */
    handEditedAt: timestamp('hand_edited_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'jobs_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'jobs_customer_id_fk',
      columns: [t.organizationId, t.customerId],
      foreignColumns: [customers.organizationId, customers.id],
    }).onDelete('cascade'),
    foreignKey({
      name: 'jobs_property_id_fk',
      columns: [t.organizationId, t.propertyId],
      foreignColumns: [properties.organizationId, properties.id],
    }),
    foreignKey({
      name: 'jobs_invoice_id_fk',
      columns: [t.organizationId, t.invoiceId],
      foreignColumns: [invoices.organizationId, invoices.id],
    }),
    foreignKey({
      name: 'jobs_schedule_id_fk',
      columns: [t.organizationId, t.scheduleId],
      foreignColumns: [jobSchedules.organizationId, jobSchedules.id],
    }),
    // One visit per schedule and occurrence: concurrent generators meet here (ON CONFLICT DO NOTHING).
    uniqueIndex('jobs_schedule_occurrence_uq').on(t.organizationId, t.scheduleId, t.occurrenceDate),
    // The reminder worker's scan: visits not reminded yet, by date.
    index('jobs_reminder_due_idx').on(t.scheduledDate).where(sql`reminder_sent_at IS NULL AND status = 'scheduled'`),
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
    id: text('id').notNull(),
    organizationId: organizationId(),
    jobId: text('job_id').notNull(),
    position: integer('position').notNull(),
    text: text('text').notNull(),
    completed: boolean('completed').notNull().default(false),
    completedAt: timestamp('completed_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ name: 'job_checklist_items_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'job_checklist_items_job_id_fk',
      columns: [t.organizationId, t.jobId],
      foreignColumns: [jobs.organizationId, jobs.id],
    }).onDelete('cascade'),
    index('job_checklist_org_job_idx').on(t.organizationId, t.jobId, t.position),
  ],
);

/** The job's history, one row per change, written in the transaction of the change. */
export const jobActivity = pgTable(
  'job_activity',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    jobId: text('job_id').notNull(),
    type: text('type').notNull(),
    message: text('message').notNull(),
    /** User or API key id; null for the system. */
    actorId: text('actor_id'),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ name: 'job_activity_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'job_activity_job_id_fk',
      columns: [t.organizationId, t.jobId],
      foreignColumns: [jobs.organizationId, jobs.id],
    }).onDelete('cascade'),
    index('job_activity_org_job_idx').on(t.organizationId, t.jobId, t.createdAt, t.id),
  ],
);

/** A schedule's priced line as stored (cents), validated by the invoices' line pricing. */
export interface ScheduleLine {
  serviceId: string | null;
  description: string;
  quantity: number;
  unitPriceCents: number;
  taxable: boolean;
  amountCents: number;
}

/** How a schedule's visits are billed (operations.md §9); validated, acted on by billing. */
export type ScheduleBilling =
  | { mode: 'per_visit'; autoSend?: boolean }
  | { mode: 'batch'; autoSend?: boolean }
  | { mode: 'installments'; amountsCents?: number[]; count: number; firstDate: string; every: 'month' }
  | { mode: 'none' };

/**
 * Recurring visits (operations.md §9): an RFC 5545 rule over calendar dates in the
 * organization's timezone. `generated_through` is the last date visits were made
 * for, so the worker's daily pass finds the schedules that need more in one index scan.
 */
export const jobSchedules = pgTable(
  'job_schedules',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    customerId: text('customer_id').notNull(),
    propertyId: text('property_id'),
    contractId: text('contract_id'),
    title: text('title').notNull(),
    rrule: text('rrule').notNull(),
    startDate: date('start_date', { mode: 'string' }).notNull(),
    endDate: date('end_date', { mode: 'string' }),
    startTime: text('start_time'),
    durationMinutes: integer('duration_minutes'),
    assignedTo: text('assigned_to').array().notNull().default(sql`'{}'::text[]`),
    // FK (organization_id, crew_id) to crews (NO ACTION, drizzle/0038: deleting a crew clears it), declared in SQL
    // only: crew-tracking's schema imports this file (time entries name a job), and a value import back would be a cycle.
    crewId: text('crew_id'),
    lineItems: jsonb('line_items').$type<ScheduleLine[]>().notNull().default([]),
    checklist: text('checklist').array().notNull().default(sql`'{}'::text[]`),
    notes: text('notes'),
    billing: jsonb('billing').$type<ScheduleBilling>().notNull(),
    /** active | paused | ended */
    status: text('status').notNull(),
    generatedThrough: date('generated_through', { mode: 'string' }),
    /**
     * Installment billing: the date of the first installment the worker has not made yet
     * (`infinity` once every one is made), so its pass selects only the schedules with one
     * due. NULL: not worked out yet (a new schedule, one whose billing changed): billed
     * from billing.firstDate by the next pass, which sets it.
     */
    nextInstallmentDate: date('next_installment_date', { mode: 'string' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'job_schedules_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'job_schedules_customer_id_fk',
      columns: [t.organizationId, t.customerId],
      foreignColumns: [customers.organizationId, customers.id],
    }).onDelete('cascade'),
    foreignKey({
      name: 'job_schedules_property_id_fk',
      columns: [t.organizationId, t.propertyId],
      foreignColumns: [properties.organizationId, properties.id],
    }),
    foreignKey({
      name: 'job_schedules_contract_id_fk',
      columns: [t.organizationId, t.contractId],
      foreignColumns: [contracts.organizationId, contracts.id],
    }),
    index('job_schedules_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    index('job_schedules_org_customer_created_idx').on(t.organizationId, t.customerId, t.createdAt, t.id),
    index('job_schedules_org_status_created_idx').on(t.organizationId, t.status, t.createdAt, t.id),
    uniqueIndex('job_schedules_contract_uq').on(t.organizationId, t.contractId).where(sql`contract_id IS NOT NULL`),
    index('job_schedules_due_idx').on(t.generatedThrough).where(sql`status = 'active'`),
    index('job_schedules_installments_due_idx')
      .on(t.nextInstallmentDate)
      .where(sql`status = 'active' AND billing->>'mode' = 'installments'`),
  ],
);

/** Occurrences never to be made (again): skipped, or whose visit was deleted. */
export const jobScheduleSkips = pgTable(
  'job_schedule_skips',
  {
    organizationId: organizationId(),
    scheduleId: text('schedule_id').notNull(),
    occurrenceDate: date('occurrence_date', { mode: 'string' }).notNull(),
    /** skipped | deleted */
    reason: text('reason').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    foreignKey({
      name: 'job_schedule_skips_schedule_id_fk',
      columns: [t.organizationId, t.scheduleId],
      foreignColumns: [jobSchedules.organizationId, jobSchedules.id],
    }).onDelete('cascade'),
    primaryKey({ name: 'job_schedule_skips_pkey', columns: [t.organizationId, t.scheduleId, t.occurrenceDate] }),
  ],
);
