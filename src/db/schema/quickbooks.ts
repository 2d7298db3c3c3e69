import { bigint, index, integer, json, pgTable, primaryKey, text, timestamp, unique } from 'drizzle-orm/pg-core';
import { createdAt, organizationId, updatedAt } from './columns.js';

/*
 * QuickBooks Online sync, one way (operations.md §11, drizzle/0049). Written only by
 * src/modules/quickbooks/.
 */

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** An organization's one connection: the realm, the sealed tokens and where the feed stopped reading events. */
export const quickbooksConnections = pgTable(
  'quickbooks_connections',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    /** connected | error (the refresh token was refused: connect again). */
    status: text('status').notNull().default('connected'),
    realmId: text('realm_id').notNull(),
    accessTokenSealed: text('access_token_sealed').notNull(),
    refreshTokenSealed: text('refresh_token_sealed').notNull(),
    accessExpiresAt: at('access_expires_at').notNull(),
    refreshExpiresAt: at('refresh_expires_at'),
    /** Bumped by every refresh: a worker that saw a 401 refreshes only if nobody did since it read the token. */
    tokenGeneration: integer('token_generation').notNull().default(0),
    connectedBy: text('connected_by'),
    connectedAt: at('connected_at').notNull().defaultNow(),
    lastSyncAt: at('last_sync_at'),
    lastError: text('last_error'),
    /** The feed's place in the event outbox: (tx, id) of the last event read. */
    feedTx: bigint('feed_tx', { mode: 'number' }).notNull().default(0),
    feedEventId: text('feed_event_id').notNull().default(''),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'quickbooks_connections_pkey', columns: [t.organizationId, t.id] }),
    unique('quickbooks_connections_org_unique').on(t.organizationId),
  ],
);

/** The sync outbox: one job per change of a record, unique per (entity, entity id, version). */
export const quickbooksSyncJobs = pgTable(
  'quickbooks_sync_jobs',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    /** customer | invoice | payment */
    entity: text('entity').notNull(),
    entityId: text('entity_id').notNull(),
    /** The event that carried the change (evt_…). */
    version: text('version').notNull(),
    eventType: text('event_type').notNull(),
    payload: json('payload').notNull(),
    /** pending | done | failed */
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: at('next_attempt_at').notNull().defaultNow(),
    lockedUntil: at('locked_until'),
    /** QuickBooks' own Fault text (or what went wrong) of a failed job. */
    error: text('error'),
    errorCode: text('error_code'),
    quickbooksId: text('quickbooks_id'),
    /** Retries asked for after QuickBooks refused the create: part of the create's requestid. */
    createRound: integer('create_round').notNull().default(0),
    syncedAt: at('synced_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'quickbooks_sync_jobs_pkey', columns: [t.organizationId, t.id] }),
    unique('quickbooks_sync_jobs_version_unique').on(t.organizationId, t.entity, t.entityId, t.version),
    index('quickbooks_sync_jobs_due_idx').on(t.status, t.nextAttemptAt),
    index('quickbooks_sync_jobs_record_idx').on(t.organizationId, t.entity, t.entityId, t.createdAt),
  ],
);

/** What each record of ours is in QuickBooks (per realm), with the SyncToken of its last write. */
export const quickbooksRecords = pgTable(
  'quickbooks_records',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    realmId: text('realm_id').notNull(),
    entity: text('entity').notNull(),
    entityId: text('entity_id').notNull(),
    quickbooksId: text('quickbooks_id').notNull(),
    syncToken: text('sync_token').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'quickbooks_records_pkey', columns: [t.organizationId, t.id] }),
    unique('quickbooks_records_entity_unique').on(t.organizationId, t.realmId, t.entity, t.entityId),
  ],
);
