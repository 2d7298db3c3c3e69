import { sql } from 'drizzle-orm';
import { boolean, date, index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { createdAt, organizationId, updatedAt } from './columns.js';
import { customers, properties } from './customers.js';

/**
 * Jobs (spec 2.4). `assigned_to` is a text[] of member user ids with a GIN index:
 * the filter `assignedTo=<userId>` becomes `assigned_to @> ARRAY[id]`, one index
 * probe, and the job row stays a single row (no join table to keep in step for a
 * list that is read far more often than it is written). User ids are globally
 * unique, so the GIN index is selective without the organization in front.
 */
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
