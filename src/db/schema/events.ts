import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
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
    data: jsonb('data').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    /** Set once the event has been turned into deliveries. */
    dispatchedAt: timestamp('dispatched_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    index('events_org_created_idx').on(t.organizationId, t.createdAt),
    index('events_undispatched_idx').on(t.createdAt).where(sql`dispatched_at IS NULL`),
  ],
);
