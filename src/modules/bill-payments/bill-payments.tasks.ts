import { and, eq, inArray, lte } from 'drizzle-orm';
import type { WorkerTask } from '../../background/runner.js';
import type { Database } from '../../db/client.js';
import { billPayments, organizations } from '../../db/schema/index.js';
import { asPlatform } from '../../platform/cross-tenant.js';
import { addDays, today } from '../../platform/dates.js';
import { statesAccepting } from '../../platform/state-machine.js';
import { inTenant, systemActor } from '../../platform/tenancy.js';
import { markBillPaymentsDue } from './bill-payments.service.js';
import { billPaymentMachine } from './bill-payments.states.js';

const SYSTEM = systemActor('bill-payments.due');
const BATCH = 500;

// Cross-tenant lookup: the worker has no tenant yet; it asks which organizations
// have scheduled bill payments dated up to tomorrow in UTC (no timezone is more
// than a day ahead), then works inside each tenant with that tenant's own today.
async function organizationsWithScheduledBillPayments(database: Database, now: Date) {
  const horizon = addDays(today('UTC', now), 1);
  return asPlatform(database.db, (tx) =>
    tx
      .selectDistinct({ id: organizations.id, timezone: organizations.timezone })
      .from(billPayments)
      .innerJoin(organizations, eq(organizations.id, billPayments.organizationId))
      .where(
        and(
          inArray(billPayments.status, statesAccepting(billPaymentMachine, 'due')),
          lte(billPayments.paymentDate, horizon),
        ),
      )
      .limit(BATCH),
  );
}

/** scheduled bill payments whose paymentDate has come (org timezone) → pending. */
export async function sweepDueBillPayments(database: Database, now = new Date()): Promise<number> {
  let moved = 0;
  for (const org of await organizationsWithScheduledBillPayments(database, now)) {
    moved += await inTenant(database.db, org.id, SYSTEM, (ctx) =>
      markBillPaymentsDue(ctx, today(org.timezone, now), BATCH),
    );
  }
  return moved;
}

export const billPaymentTask: WorkerTask = {
  name: 'bill-payments.due',
  intervalMs: 60_000,
  run: (t) => sweepDueBillPayments(t.database),
};
