import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { ts } from './column-types.js';
import { createdAt, organizationId, updatedAt } from './columns.js';

/**
 * Outgoing mail, queued in the transaction of the change that mails (an invoice sent,
 * an invitation made) and sent later by the worker (`mail.deliver`) with retries, so
 * a mail server outage delays mail and never holds or fails a request. The document's
 * `lastEmail` is read from here.
 */
export const mailJobs = pgTable(
  'mail_jobs',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    /** What the mail is about: `invoice`, `estimate`, `contract`, `purchase_order`, `invitation`. */
    documentType: text('document_type').notNull(),
    documentId: text('document_id').notNull(),
    to: jsonb('to').$type<string[]>().notNull(),
    subject: text('subject').notNull(),
    body: text('body').notNull(),
    /** The HTML part, when the mail has one (mail clients show it and fall back to `body`). */
    html: text('html'),
    /** `pdf`: the worker renders the document's PDF at send time and attaches it. */
    attachment: text('attachment'),
    /** pending (queued or retrying) | sent | failed (gave up after MAX_ATTEMPTS). */
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at').notNull().defaultNow(),
    /** Lease of the worker that claimed the job; another worker may take it after this. */
    lockedUntil: ts('locked_until'),
    claimToken: text('claim_token'),
    lastError: text('last_error'),
    sentAt: ts('sent_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'mail_jobs_pkey', columns: [t.organizationId, t.id] }),
    index('mail_jobs_org_document_idx').on(t.organizationId, t.documentType, t.documentId, t.createdAt),
    index('mail_jobs_due_idx').on(t.nextAttemptAt).where(sql`status = 'pending'`),
  ],
);
