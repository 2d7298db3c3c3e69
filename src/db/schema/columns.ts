import { text, timestamp } from 'drizzle-orm/pg-core';
import { organizations } from './organizations.js';

/** Timestamps stored as timestamptz and handed to code as Date objects. */
export const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
export const updatedAt = () => timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();

/**
 * The tenant column. Every table that has it gets FORCE ROW LEVEL SECURITY and the
 * tenant policy from `ensureTenantIsolation` (src/db/migrate.ts), so no table can
 * be added without isolation.
 */
export const organizationId = () =>
  text('organization_id')
    .notNull()
    .references(() => organizations.id, { onDelete: 'cascade' });
