import { sql } from 'drizzle-orm';
import { foreignKey, index, integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { ts } from './column-types.js';
import { createdAt, organizationId, updatedAt } from './columns.js';
import { customers } from './customers.js';

/**
 * Text messages both ways (operations.md §10). An outbound text is written in the transaction of
 * the change that sends it (`queued`) and sent by the worker (`messages.send`): `sending` commits
 * before Twilio is called, so a crash after the call never sends it twice. `jobId`, `invoiceId`
 * and `estimateId` say what it was about and have no foreign key (a deleted job keeps its texts).
 */
export const messages = pgTable(
  'messages',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    customerId: text('customer_id'),
    /** outbound | inbound */
    direction: text('direction').notNull(),
    to: text('to').notNull(),
    from: text('from').notNull(),
    body: text('body').notNull(),
    kind: text('kind').notNull(),
    status: text('status').notNull(),
    segments: integer('segments').notNull(),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    /** Twilio's MessageSid (SM…). */
    providerId: text('provider_id'),
    jobId: text('job_id'),
    invoiceId: text('invoice_id'),
    estimateId: text('estimate_id'),
    /** Automatic texts made once per subject and channel (`reminder:<jobId>`). */
    dedupeKey: text('dedupe_key'),
    sendAfter: ts('send_after'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at').notNull().defaultNow(),
    /** When `sending` was committed: the stuck sweep's clock and the per-organization pace. */
    handedAt: ts('handed_at'),
    createdAt: createdAt(),
    sentAt: ts('sent_at'),
    deliveredAt: ts('delivered_at'),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'messages_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'messages_customer_id_fk',
      columns: [t.organizationId, t.customerId],
      foreignColumns: [customers.organizationId, customers.id],
    }).onDelete('cascade'),
    uniqueIndex('messages_org_provider_id_key')
      .on(t.organizationId, t.providerId)
      .where(sql`${t.providerId} IS NOT NULL`),
    uniqueIndex('messages_org_dedupe_key').on(t.organizationId, t.dedupeKey).where(sql`${t.dedupeKey} IS NOT NULL`),
    index('messages_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    index('messages_org_customer_created_idx').on(t.organizationId, t.customerId, t.createdAt, t.id),
    index('messages_due_idx').on(t.nextAttemptAt).where(sql`status = 'queued'`),
    index('messages_org_queued_idx').on(t.organizationId, t.nextAttemptAt, t.id).where(sql`${t.status} = 'queued'`),
    index('messages_sending_idx').on(t.handedAt).where(sql`status = 'sending'`),
    index('messages_org_handed_idx').on(t.organizationId, t.handedAt).where(sql`${t.handedAt} IS NOT NULL`),
  ],
);

/**
 * A Twilio status callback that came before its text's MessageSid was recorded (Twilio called
 * back before the worker's commit): kept by MessageSid, applied when the worker records the id
 * (operations.md §10, drizzle/0046). One row per MessageSid, the furthest status reported.
 */
export const messageStatusReports = pgTable(
  'message_status_reports',
  {
    organizationId: organizationId(),
    providerId: text('provider_id').notNull(),
    status: text('status').notNull(),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    receivedAt: ts('received_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: 'message_status_reports_pkey', columns: [t.organizationId, t.providerId] }),
    index('message_status_reports_received_idx').on(t.receivedAt),
  ],
);
