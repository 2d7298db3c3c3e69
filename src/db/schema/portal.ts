import { index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { createdAt, organizationId } from './columns.js';

/**
 * Links sent to customers (invoice, estimate, contract). The token is random and
 * only its SHA-256 is stored; each token opens one document and expires.
 */
export const portalTokens = pgTable(
  'portal_tokens',
  {
    id: text('id').primaryKey(),
    organizationId: organizationId(),
    tokenHash: text('token_hash').notNull().unique(),
    documentType: text('document_type').notNull(),
    documentId: text('document_id').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    lastViewedAt: timestamp('last_viewed_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
  },
  (t) => [index('portal_tokens_document_idx').on(t.organizationId, t.documentType, t.documentId)],
);
