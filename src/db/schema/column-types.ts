import { bigint, timestamp } from 'drizzle-orm/pg-core';

/*
 * Column types every schema file uses. Apart from columns.ts, which imports the
 * organizations table (for the tenant column) and so cannot be imported by it.
 */

/** A timestamptz column handed to code as a Date. */
export const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** Money: integer cents in a bigint, handed to code as a number (decisions: money is integer cents). */
export const cents = (name: string) => bigint(name, { mode: 'number' });
