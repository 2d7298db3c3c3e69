import { sql } from 'drizzle-orm';
import { bigint, boolean, check, index, integer, pgTable, pgView, text } from 'drizzle-orm/pg-core';
import { ts } from './column-types.js';

/*
 * Better Auth's core tables (user, session, account, verification), written by hand
 * because its schema CLI needs Node 22. Property names are Better Auth's field names.
 */

export const users = pgTable('users', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  email: text('email').notNull().unique(),
  emailVerified: boolean('email_verified').notNull().default(false),
  image: text('image'),
  createdAt: ts('created_at').notNull().defaultNow(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

export const sessions = pgTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    expiresAt: ts('expires_at').notNull(),
    token: text('token').notNull().unique(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    ipAddress: text('ip_address'),
    userAgent: text('user_agent'),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The organization tenant routes act on; set by POST /api/organizations[/{id}/activate]. */
    activeOrganizationId: text('active_organization_id'),
  },
  (t) => [index('sessions_user_idx').on(t.userId)],
);

export const accounts = pgTable(
  'accounts',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id').notNull(),
    providerId: text('provider_id').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    accessToken: text('access_token'),
    refreshToken: text('refresh_token'),
    idToken: text('id_token'),
    accessTokenExpiresAt: ts('access_token_expires_at'),
    refreshTokenExpiresAt: ts('refresh_token_expires_at'),
    scope: text('scope'),
    password: text('password'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('accounts_user_idx').on(t.userId)],
);

export const verifications = pgTable('verifications', {
  id: text('id').primaryKey(),
  identifier: text('identifier').notNull(),
  value: text('value').notNull(),
  expiresAt: ts('expires_at').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/**
 * One row, bumped by every revocation: API processes serve a cached credential only
 * while the generation is unchanged (src/platform/auth/revocations.ts). Platform role only.
 */
export const authGeneration = pgTable(
  'auth_generation',
  {
    id: integer('id').primaryKey().default(1),
    generation: bigint('generation', { mode: 'number' }).notNull().default(0),
  },
  (t) => [check('auth_generation_one_row', sql`${t.id} = 1`)],
);

/**
 * The names and emails of the members of the transaction's organization
 * (`app.organization_id`): what a tenant transaction may read of `users`, which it cannot
 * read itself (drizzle/0037_auth_tables_closed.sql). Read only.
 */
export const memberUsers = pgView('member_users', {
  id: text('id').notNull(),
  name: text('name').notNull(),
  email: text('email').notNull(),
}).existing();
