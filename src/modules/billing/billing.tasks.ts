import { and, eq, inArray, lt } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { type estimates, type invoices, organizations } from '../../db/schema/index.js';
import { asPlatform } from '../../platform/cross-tenant.js';
import { addDays, today } from '../../platform/dates.js';
import { type StateMachine, statesAccepting } from '../../platform/state-machine.js';
import { type Ctx, inTenant, systemActor } from '../../platform/tenancy.js';

/*
 * Time-driven transitions. Each sweep first asks, across tenants, which
 * organizations have candidates (a cheap pre-filter: no timezone is more than a
 * day ahead of UTC), then per organization works inside that tenant with its own
 * "today", so the transition and its events commit together. Rows are claimed
 * FOR UPDATE SKIP LOCKED and re-checked by status, so several workers never move
 * the same record twice.
 */

const BATCH = 500;

export type Sweep = (database: Database, now?: Date) => Promise<number>;

/**
 * One sweep: the organizations with `table` rows in a state that accepts `trigger`
 * and `dateColumn` before tomorrow (UTC), then `move` inside each organization with
 * its own "today". The documents' modules declare their sweeps with it (invoices.tasks.ts,
 * estimates.tasks.ts); src/modules/tasks.ts lists them for the worker.
 */
export function sweepOf<S extends string, T extends string>(
  task: string,
  table: typeof invoices | typeof estimates,
  dateColumn: typeof invoices.dueDate | typeof estimates.expirationDate,
  machine: StateMachine<S, T>,
  trigger: T,
  move: (ctx: Ctx, todayDate: string, limit: number) => Promise<number>,
): Sweep {
  const states = statesAccepting(machine, trigger);
  return async (database, now = new Date()) => {
    const horizon = addDays(today('UTC', now), 1);
    const orgs = await asPlatform(database.db, (tx) =>
      tx
        .selectDistinct({ id: organizations.id, timezone: organizations.timezone })
        .from(table)
        .innerJoin(organizations, eq(organizations.id, table.organizationId))
        .where(and(inArray(table.status, states), lt(dateColumn, horizon)))
        .limit(BATCH),
    );
    let moved = 0;
    for (const org of orgs) {
      moved += await inTenant(database.db, org.id, systemActor(task), (ctx) =>
        move(ctx, today(org.timezone, now), BATCH),
      );
    }
    return moved;
  };
}
