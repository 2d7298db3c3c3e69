import { index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Rate-limit counters kept in the database when REDIS_URL is unset, so that every API process
 * counts against one budget (src/platform/rate-limit.ts; the sign-in failure limit). The column
 * names are the ones rate-limiter-flexible's RateLimiterDrizzle reads and writes. Not a tenant
 * table: keys are emails and principals; only the platform role touches it.
 */
export const rateLimits = pgTable(
  'rate_limits',
  {
    /** `<limiter prefix>:<what is counted>`, e.g. `signin:dana@example.com`. */
    key: text('key').primaryKey(),
    points: integer('points').notNull(),
    /** When the window ends; the row is reset (not deleted) by the next consume after it. */
    expire: timestamp('expire', { withTimezone: true, mode: 'date' }),
  },
  (t) => [index('rate_limits_expire_idx').on(t.expire)],
);
