import { sql } from 'drizzle-orm';
import { bigint, index, integer, json, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { organizationId } from './columns.js';

/** The id of the transaction writing the row (xid8, as a bigint). */
const WRITING_TRANSACTION = sql`(pg_current_xact_id()::text::bigint)`;

/**
 * The event outbox. A row is written in the same transaction as the change that
 * caused it; the webhook engine fans it out to endpoints afterwards.
 */
export const events = pgTable(
  'events',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    type: text('type').notNull(),
    /** As emitted: JSON text, not jsonb (drizzle/0030), so deliveries carry the bytes the event was written with. */
    data: json('data').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    /**
     * The id of the transaction that wrote it (the database's default): with the
     * organization, the key of its rows in `event_batches` while it waits to be fanned out
     * and in `workflow_event_batches` while it waits to be matched against the workflows.
     */
    tx: bigint('tx', { mode: 'number' }).notNull().default(WRITING_TRANSACTION),
    /**
     * Loop guard of workflows (operations.md §7): 0 for an event caused by a user or an
     * API call, the run's depth + 1 for one caused by a workflow action.
     */
    depth: integer('depth').notNull().default(0),
    /**
     * Set on the events the workflows worker had matched before drizzle/0034, which it skips;
     * since then what it has still to match is `workflow_event_batches`, and this stays null.
     */
    workflowsCheckedAt: timestamp('workflows_checked_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    primaryKey({ name: 'events_pkey', columns: [t.organizationId, t.id] }),
    index('events_org_created_idx').on(t.organizationId, t.createdAt),
    index('events_batch_idx').on(t.tx, t.organizationId, t.id),
  ],
);

/**
 * What the webhook fan-out has still to read: one row per writing transaction and
 * organization, added by a trigger on every insert into `events` (drizzle/0033; so it
 * commits with its events)
 * and deleted once all of them are made into deliveries. `fannedTo` is the last event
 * (by id) already fanned out of a batch the fan-out stopped inside.
 */
export const eventBatches = pgTable(
  'event_batches',
  {
    tx: bigint('tx', { mode: 'number' }).notNull().default(WRITING_TRANSACTION),
    organizationId: organizationId(),
    fannedTo: text('fanned_to'),
  },
  (t) => [primaryKey({ name: 'event_batches_pkey', columns: [t.tx, t.organizationId] })],
);

/**
 * What the workflows worker has still to match, kept like `eventBatches` (drizzle/0034): one
 * row per writing transaction and organization, added by the same trigger, deleted once the
 * worker has read all of its events. `checkedTo` is the last event (by id) already matched of
 * a batch the worker stopped inside.
 */
export const workflowEventBatches = pgTable(
  'workflow_event_batches',
  {
    tx: bigint('tx', { mode: 'number' }).notNull(),
    organizationId: organizationId(),
    checkedTo: text('checked_to'),
  },
  (t) => [primaryKey({ name: 'workflow_event_batches_pkey', columns: [t.tx, t.organizationId] })],
);
