import { and, eq, inArray, lt } from 'drizzle-orm';
import type { WorkerTask } from '../../background/runner.js';
import type { Database } from '../../db/client.js';
import { estimates, invoices, organizations } from '../../db/schema/index.js';
import { asPlatform } from '../../platform/cross-tenant.js';
import { addDays, today } from '../../platform/dates.js';
import { inTenant, systemActor } from '../../platform/tenancy.js';
import { expireEstimates } from '../estimates/estimates.service.js';
import { markInvoicesOverdue } from '../invoices/invoices.service.js';

/*
 * Time-driven transitions. Each sweep first asks, across tenants, which
 * organizations have candidates (a cheap pre-filter: no timezone is more than a
 * day ahead of UTC), then per organization works inside that tenant with its own
 * "today", so the transition and its events commit together. Rows are claimed
 * FOR UPDATE SKIP LOCKED and re-checked by status, so several workers never move
 * the same record twice.
 */

const BATCH = 500;

type Sweep = (database: Database, now?: Date) => Promise<number>;

async function orgsWith(
  database: Database,
  table: typeof invoices | typeof estimates,
  dateColumn: typeof invoices.dueDate | typeof estimates.expirationDate,
  states: string[],
  now: Date,
) {
  const horizon = addDays(today('UTC', now), 1);
  return asPlatform(database.db, (tx) =>
    tx
      .selectDistinct({ id: organizations.id, timezone: organizations.timezone })
      .from(table)
      .innerJoin(organizations, eq(organizations.id, table.organizationId))
      .where(and(inArray(table.status, states), lt(dateColumn, horizon)))
      .limit(BATCH),
  );
}

/** sent | partially_paid invoices whose dueDate is before today (org timezone) → overdue. */
export const sweepOverdueInvoices: Sweep = async (database, now = new Date()) => {
  let moved = 0;
  for (const org of await orgsWith(database, invoices, invoices.dueDate, ['sent', 'partially_paid'], now)) {
    moved += await inTenant(database.db, org.id, systemActor('invoices.overdue'), (ctx) =>
      markInvoicesOverdue(ctx, today(org.timezone, now), BATCH),
    );
  }
  return moved;
};

/** sent | viewed estimates whose expirationDate is before today (org timezone) → expired, no event. */
export const sweepExpiredEstimates: Sweep = async (database, now = new Date()) => {
  let moved = 0;
  for (const org of await orgsWith(database, estimates, estimates.expirationDate, ['sent', 'viewed'], now)) {
    moved += await inTenant(database.db, org.id, systemActor('estimates.expire'), (ctx) =>
      expireEstimates(ctx, today(org.timezone, now), BATCH),
    );
  }
  return moved;
};

export const billingTasks: WorkerTask[] = [
  { name: 'invoices.overdue', intervalMs: 60_000, run: (t) => sweepOverdueInvoices(t.database) },
  { name: 'estimates.expire', intervalMs: 60_000, run: (t) => sweepExpiredEstimates(t.database) },
];
