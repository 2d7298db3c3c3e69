import { pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';

/**
 * What a secret opens; a new kind (booking slugs) is one more value here and in the table's CHECK.
 * A type only: the schema module exports tables and nothing else.
 */
export type SecretKind = 'api_key' | 'device_token' | 'portal_token' | 'booking_slug';

/**
 * The organization of a secret that arrives without one (operations.md §13), by the secret's
 * SHA-256: read first, then the tenant table filtered by the organization it names. A global
 * table (a Citus reference table, docs/scaling.md), written only by src/platform/auth/secret-lookups.ts
 * in the transaction that creates or revokes the secret. No foreign key (a global table never
 * points at a tenant table). Only the platform role reads or writes it; a tenant transaction maps
 * and unmaps its own organization's secrets through SQL functions (drizzle/0036_secret_lookups.sql).
 */
export const secretLookups = pgTable(
  'secret_lookups',
  {
    kind: text('kind').notNull(),
    hash: text('hash').notNull(),
    /** The organization the secret belongs to; not `organization_id`: a global table (0036 says why). */
    tenantId: text('tenant_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ name: 'secret_lookups_pkey', columns: [t.kind, t.hash] })],
);
