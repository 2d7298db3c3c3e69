import { sql } from 'drizzle-orm';
import {
  doublePrecision,
  foreignKey,
  index,
  jsonb,
  pgTable,
  primaryKey,
  real,
  text,
  unique,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { ts } from './column-types.js';
import { createdAt, organizationId, updatedAt } from './columns.js';
import { jobs } from './jobs.js';
import { members } from './organizations.js';

/** A named group of members (operations.md §4); member ids are checked against `members` on write. */
export const crews = pgTable(
  'crews',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    name: text('name').notNull(),
    memberIds: text('member_ids').array().notNull().default(sql`'{}'::text[]`),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'crews_pkey', columns: [t.organizationId, t.id] }),
    index('crews_org_created_idx').on(t.organizationId, t.createdAt, t.id),
  ],
);

/**
 * Clock-in/clock-out entries. `user_id` is copied from the member (it never changes)
 * so every response can carry it without a join. One open entry per member is a
 * partial unique index, so two concurrent clock-ins cannot both succeed.
 */
export const timeEntries = pgTable(
  'time_entries',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    memberId: text('member_id').notNull(),
    userId: text('user_id').notNull(),
    jobId: text('job_id'),
    /** work | drive */
    type: text('type').notNull(),
    startedAt: ts('started_at').notNull(),
    endedAt: ts('ended_at'),
    /** Miles, drive entries only. */
    mileage: doublePrecision('mileage'),
    startLocation: jsonb('start_location'),
    endLocation: jsonb('end_location'),
    /** Admin corrections: [{at, actorId, changes: {field: {from, to}}}], oldest first. */
    edits: jsonb('edits').notNull().default([]),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'time_entries_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'time_entries_member_id_fk',
      columns: [t.organizationId, t.memberId],
      foreignColumns: [members.organizationId, members.id],
    }).onDelete('cascade'),
    foreignKey({
      name: 'time_entries_job_id_fk',
      columns: [t.organizationId, t.jobId],
      foreignColumns: [jobs.organizationId, jobs.id],
    }),
    uniqueIndex('time_entries_one_open_uq').on(t.organizationId, t.memberId).where(sql`${t.endedAt} IS NULL`),
    index('time_entries_org_started_idx').on(t.organizationId, t.startedAt, t.id),
    index('time_entries_org_member_started_idx').on(t.organizationId, t.memberId, t.startedAt),
    index('time_entries_org_job_idx').on(t.organizationId, t.jobId),
  ],
);

/**
 * GPS points, ~1M per organization per month. No surrogate id: the primary key
 * (organization, member, recorded_at) is the trail's range scan and makes a phone's
 * retried batch a no-op (ON CONFLICT DO NOTHING). Rows arrive in time order, so a
 * BRIN index on recorded_at (a few pages for millions of rows) serves the 90-day purge.
 */
export const crewLocations = pgTable(
  'crew_locations',
  {
    organizationId: organizationId(),
    memberId: text('member_id').notNull(),
    recordedAt: ts('recorded_at').notNull(),
    lat: doublePrecision('lat').notNull(),
    lng: doublePrecision('lng').notNull(),
    /** Metres, as reported by the phone. */
    accuracy: real('accuracy'),
  },
  (t) => [
    foreignKey({
      name: 'crew_locations_member_id_fk',
      columns: [t.organizationId, t.memberId],
      foreignColumns: [members.organizationId, members.id],
    }).onDelete('cascade'),
    primaryKey({ columns: [t.organizationId, t.memberId, t.recordedAt] }),
    index('crew_locations_recorded_brin').using('brin', t.recordedAt),
  ],
);

/** The latest point of each member, upserted with every batch: "where is everyone" is one index read. */
export const crewLatestLocations = pgTable(
  'crew_latest_locations',
  {
    organizationId: organizationId(),
    memberId: text('member_id').notNull(),
    userId: text('user_id').notNull(),
    recordedAt: ts('recorded_at').notNull(),
    lat: doublePrecision('lat').notNull(),
    lng: doublePrecision('lng').notNull(),
    accuracy: real('accuracy'),
  },
  (t) => [
    foreignKey({
      name: 'crew_latest_locations_member_id_fk',
      columns: [t.organizationId, t.memberId],
      foreignColumns: [members.organizationId, members.id],
    }).onDelete('cascade'),
    primaryKey({ columns: [t.organizationId, t.memberId] }),
  ],
);

/** Mobile device tokens (`dev_…`): only the SHA-256 is stored; each acts as one member. */
export const deviceTokens = pgTable(
  'device_tokens',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    memberId: text('member_id').notNull(),
    userId: text('user_id').notNull(),
    name: text('name').notNull(),
    tokenHash: text('token_hash').notNull(),
    prefix: text('prefix').notNull(),
    createdBy: text('created_by').notNull(),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ name: 'device_tokens_pkey', columns: [t.organizationId, t.id] }),
    // Unique within the organization; a token arrives without one, so it is looked up by its hash alone.
    unique('device_tokens_org_token_hash_unique').on(t.organizationId, t.tokenHash),
    index('device_tokens_token_hash_idx').on(t.tokenHash),
    foreignKey({
      name: 'device_tokens_member_id_fk',
      columns: [t.organizationId, t.memberId],
      foreignColumns: [members.organizationId, members.id],
    }).onDelete('cascade'),
    index('device_tokens_org_created_idx').on(t.organizationId, t.createdAt, t.id),
  ],
);
