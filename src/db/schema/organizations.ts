import { index, integer, jsonb, pgTable, primaryKey, text, unique, uniqueIndex } from 'drizzle-orm/pg-core';
import { users } from './auth.js';
import { ts } from './column-types.js';

/** A tenant. Its own row is visible only inside its tenant context (policy on `id`). */
export const organizations = pgTable('organizations', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  plan: text('plan').notNull(),
  timezone: text('timezone').notNull().default('UTC'),
  /** Organization settings (decisions §4), validated by the settings module. */
  settings: jsonb('settings').notNull().default({}),
  createdAt: ts('created_at').notNull().defaultNow(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

export const members = pgTable(
  'members',
  {
    id: text('id').notNull(),
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    role: text('role').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: 'members_pkey', columns: [t.organizationId, t.id] }),
    uniqueIndex('members_org_user_uq').on(t.organizationId, t.userId),
    index('members_user_idx').on(t.userId),
    index('members_org_created_idx').on(t.organizationId, t.createdAt, t.id),
  ],
);

export const invitations = pgTable(
  'invitations',
  {
    id: text('id').notNull(),
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    email: text('email').notNull(),
    role: text('role').notNull(),
    status: text('status').notNull().default('pending'),
    invitedBy: text('invited_by').notNull(),
    expiresAt: ts('expires_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: 'invitations_pkey', columns: [t.organizationId, t.id] }),
    index('invitations_org_idx').on(t.organizationId, t.createdAt, t.id),
    // The id is the capability and arrives without its organization (acceptInvitation).
    index('invitations_id_idx').on(t.id),
  ],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').notNull(),
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    role: text('role').notNull(),
    /** SHA-256 of the key; the key itself is shown once and never stored. */
    keyHash: text('key_hash').notNull(),
    /** First characters of the key so people can tell keys apart. */
    prefix: text('prefix').notNull(),
    createdBy: text('created_by').notNull(),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: 'api_keys_pkey', columns: [t.organizationId, t.id] }),
    index('api_keys_org_idx').on(t.organizationId, t.createdAt, t.id),
    // Unique within the organization; a key arrives without one, so it is looked up by its hash alone.
    unique('api_keys_org_key_hash_unique').on(t.organizationId, t.keyHash),
    index('api_keys_key_hash_idx').on(t.keyHash),
  ],
);

/** Stored first responses for Idempotency-Key replays (decisions §3), kept 24 h. */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    /** Who sent it: another principal of the same organization cannot replay it. */
    principal: text('principal').notNull(),
    requestHash: text('request_hash').notNull(),
    statusCode: integer('status_code'),
    responseBody: text('response_body'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.key] }), index('idempotency_created_idx').on(t.createdAt)],
);
