import { sql } from 'drizzle-orm';
import { index, integer, json, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { organizationId } from './columns.js';

/**
 * The event outbox. A row is written in the same transaction as the change that
 * caused it; the webhook engine fans it out to endpoints afterwards.
 */
export const events = pgTable(
  'events',
  {
    id: text('id').primaryKey(),
    organizationId: organizationId(),
    type: text('type').notNull(),
    /** As emitted: JSON text, not jsonb (drizzle/0030), so deliveries carry the bytes the event was written with. */
    data: json('data').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    /** Set once the event has been turned into deliveries. */
    dispatchedAt: timestamp('dispatched_at', { withTimezone: true, mode: 'date' }),
    /**
     * Loop guard of workflows (operations.md §7): 0 for an event caused by a user or an
     * API call, the run's depth + 1 for one caused by a workflow action.
     */
    depth: integer('depth').notNull().default(0),
    /** Set once the workflows worker has matched the event against the organization's workflows. */
    workflowsCheckedAt: timestamp('workflows_checked_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    index('events_org_created_idx').on(t.organizationId, t.createdAt),
    index('events_undispatched_idx').on(t.createdAt).where(sql`dispatched_at IS NULL`),
    index('events_workflows_unchecked_idx').on(t.createdAt).where(sql`workflows_checked_at IS NULL`),
  ],
);
