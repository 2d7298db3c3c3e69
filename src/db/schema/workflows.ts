import { sql } from 'drizzle-orm';
import {
  boolean,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { ts } from './column-types.js';
import { createdAt, organizationId, updatedAt } from './columns.js';

/**
 * A customer's workflow automation (operations.md §7): when a catalog event of
 * `trigger_event` commits and every condition holds, the worker runs `actions`.
 * `conditions` and `actions` are stored as validated by the workflows module.
 */
export const workflows = pgTable(
  'workflows',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    /** `[a-z0-9][a-z0-9_.-]*`, unique in the organization; the emit action sends `workflow.<name>`. */
    name: text('name').notNull(),
    description: text('description'),
    triggerEvent: text('trigger_event').notNull(),
    conditions: jsonb('conditions').notNull(),
    actions: jsonb('actions').notNull(),
    active: boolean('active').notNull().default(true),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'workflows_pkey', columns: [t.organizationId, t.id] }),
    uniqueIndex('workflows_org_name_key').on(t.organizationId, t.name),
    index('workflows_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    /** The worker's lookup: active workflows of an organization by trigger. */
    index('workflows_org_trigger_idx').on(t.organizationId, t.triggerEvent).where(sql`active`),
  ],
);

/**
 * One run of one workflow for one event. Unique per (workflow, event): the worker may
 * see an event twice (at-least-once) but never runs a workflow twice for it. `actions`
 * holds one result per action already done, appended in the same transaction as the
 * action's effect, so a run resumed after a crash skips what is done.
 * Status: pending → succeeded | failed (failed when any action failed).
 */
export const workflowRuns = pgTable(
  'workflow_runs',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    workflowId: text('workflow_id').notNull(),
    eventId: text('event_id').notNull(),
    eventType: text('event_type').notNull(),
    /** The workflow as it was when the event matched (`{name, actions}`): an edit never changes a run under way. */
    definition: jsonb('definition').notNull(),
    /** Depth of the trigger event; events the run's actions cause get depth + 1. */
    depth: integer('depth').notNull().default(0),
    status: text('status').notNull().default('pending'),
    actions: jsonb('actions').notNull().default(sql`'[]'::jsonb`),
    attempts: integer('attempts').notNull().default(0),
    /** Lease of the worker running it; another worker may resume the run after this. */
    lockedUntil: ts('locked_until'),
    finishedAt: ts('finished_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'workflow_runs_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'workflow_runs_workflow_id_fk',
      columns: [t.organizationId, t.workflowId],
      foreignColumns: [workflows.organizationId, workflows.id],
    }).onDelete('cascade'),
    uniqueIndex('workflow_runs_workflow_event_key').on(t.organizationId, t.workflowId, t.eventId),
    index('workflow_runs_org_workflow_idx').on(t.organizationId, t.workflowId, t.createdAt, t.id),
    index('workflow_runs_pending_idx').on(t.createdAt).where(sql`status = 'pending'`),
  ],
);
