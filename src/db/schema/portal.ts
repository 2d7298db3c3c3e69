import { index, pgTable, primaryKey, text, timestamp, unique } from 'drizzle-orm/pg-core';
import { createdAt, organizationId } from './columns.js';

/**
 * Links sent to customers (invoice, estimate, contract). The token is random and
 * only its SHA-256 is stored; each token opens one document and expires.
 */
export const portalTokens = pgTable(
  'portal_tokens',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    tokenHash: text('token_hash').notNull(),
    documentType: text('document_type').notNull(),
    documentId: text('document_id').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    lastViewedAt: timestamp('last_viewed_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ name: 'portal_tokens_pkey', columns: [t.organizationId, t.id] }),
    // Unique within the organization; a token arrives without one, so it is looked up by its hash alone.
    unique('portal_tokens_org_token_hash_unique').on(t.organizationId, t.tokenHash),
    index('portal_tokens_token_hash_idx').on(t.tokenHash),
    index('portal_tokens_document_idx').on(t.organizationId, t.documentType, t.documentId),
  ],
);
