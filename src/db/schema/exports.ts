import { bigint, index, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { ts } from './column-types.js';
import { createdAt, organizationId, updatedAt } from './columns.js';

/**
 * Bulk exports (operations.md §7): one row per requested archive. The worker claims a
 * queued row, streams the organization's resources into a zip under EXPORT_DIR and
 * reports progress here; the file is removed (and the row marked expired by its
 * `expiresAt`) seven days after completion.
 */
export const dataExports = pgTable(
  'data_exports',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    /** queued | running | completed | failed */
    status: text('status').notNull(),
    /** ndjson | csv */
    format: text('format').notNull(),
    /** The resource names exported, in the order of the registry. */
    resources: jsonb('resources').$type<string[]>().notNull(),
    rows: bigint('rows', { mode: 'number' }).notNull().default(0),
    totalRows: bigint('total_rows', { mode: 'number' }),
    sizeBytes: bigint('size_bytes', { mode: 'number' }),
    /** The archive's file name under EXPORT_DIR; null until completed and after removal. */
    fileName: text('file_name'),
    error: text('error'),
    /** Worker claim: the attempt count, so a crashed run is retried a bounded number of times. */
    attempts: integer('attempts').notNull().default(0),
    requestedBy: text('requested_by').notNull(),
    startedAt: ts('started_at'),
    completedAt: ts('completed_at'),
    expiresAt: ts('expires_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'data_exports_pkey', columns: [t.organizationId, t.id] }),
    index('data_exports_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    // The worker's cross-tenant look for work and for archives past their expiry.
    index('data_exports_status_idx').on(t.status, t.createdAt),
    index('data_exports_expires_idx').on(t.expiresAt),
  ],
);
