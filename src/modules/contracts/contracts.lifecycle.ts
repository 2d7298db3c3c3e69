import { and, eq, inArray, sql } from 'drizzle-orm';
import type { WorkerTask } from '../../background/runner.js';
import type { Db } from '../../db/client.js';
import { rowsOf } from '../../db/client.js';
import { contracts } from '../../db/schema/index.js';
import { asPlatform, perOrganization } from '../../platform/cross-tenant.js';
import { statesAccepting, take } from '../../platform/state-machine.js';
import { systemActor } from '../../platform/tenancy.js';
import { followContractActivation, followContractEnd } from '../jobs/schedules/schedules.service.js';
import { recordContractActivity } from './contracts.service.js';
import { type ContractStatus, contractMachine } from './contracts.states.js';

/** The worker's actor; its activity entries carry no actor id (recorded with null). */
const SYSTEM = systemActor('contract-lifecycle');
const BATCH = 500;

/** The worker's triggers, and the move each makes from one state the table accepts it in. */
type Trigger = 'activate' | 'expire';
type Move = { trigger: Trigger; from: ContractStatus; to: ContractStatus };

/**
 * Contracts due for `move` today in their organization's timezone, across
 * organizations (a platform scan, like the portal's token lookup; the tenant's
 * own transaction then makes the change). "Today" is computed in SQL from `now`,
 * so tests pass a fixed instant.
 *  - signed → active once startDate ≤ today (no startDate: at once);
 *  - active → expired once endDate < today (no endDate: never).
 */
async function dueContracts(db: Db, move: Move, now: Date) {
  const today = sql`(${now.toISOString()}::timestamptz AT TIME ZONE o.timezone)::date`;
  const due =
    move.trigger === 'activate'
      ? sql`(c.start_date IS NULL OR c.start_date <= ${today})`
      : sql`(c.end_date IS NOT NULL AND c.end_date < ${today})`;
  return rowsOf<{ id: string; organization_id: string }>(
    await asPlatform(db, (tx) =>
      tx.execute(sql`
        SELECT c.id, c.organization_id FROM contracts c
        JOIN organizations o ON o.id = c.organization_id
        WHERE c.status = ${move.from} AND ${due}
        ORDER BY c.organization_id, c.id
        LIMIT ${BATCH}`),
    ),
  );
}

async function apply(db: Db, move: Move, now: Date): Promise<number> {
  return perOrganization(db, await dueContracts(db, move, now), SYSTEM, async (ctx, ids) => {
    const organizationId = ctx.organizationId;
    // The status condition is the claim: of several workers racing, one UPDATE
    // returns the row and writes the activity; the others find it already moved.
    const changed = await ctx.tx
      .update(contracts)
      .set({
        status: move.to,
        ...(move.trigger === 'activate' ? { activatedAt: now } : { expiredAt: now }),
        updatedAt: now,
      })
      .where(
        and(eq(contracts.organizationId, organizationId), inArray(contracts.id, ids), eq(contracts.status, move.from)),
      )
      .returning({ id: contracts.id, startDate: contracts.startDate, endDate: contracts.endDate });
    for (const c of changed) {
      // The contract's recurring schedule follows it in this same transaction.
      if (move.trigger === 'activate') await followContractActivation(ctx, c.id, now);
      else await followContractEnd(ctx, c.id, now);
      const description =
        move.trigger === 'activate'
          ? `Activated: term started${c.startDate ? ` ${c.startDate}` : ''}`
          : `Expired: term ended ${c.endDate}`;
      await recordContractActivity(ctx, c.id, move.trigger === 'activate' ? 'activated' : 'expired', description, null);
    }
    return changed.length;
  });
}

/** `trigger` for every contract due for it, from each state the table accepts it in. */
async function applyTrigger(db: Db, trigger: Trigger, now: Date): Promise<number> {
  let moved = 0;
  for (const from of statesAccepting(contractMachine, trigger)) {
    moved += await apply(db, { trigger, from, to: take(contractMachine, from, trigger) }, now);
  }
  return moved;
}

/** signed → active for contracts whose term has started (org timezone). */
export function activateDueContracts(db: Db, now: Date = new Date()): Promise<number> {
  return applyTrigger(db, 'activate', now);
}

/** active → expired for contracts whose endDate has passed (org timezone). */
export function expireEndedContracts(db: Db, now: Date = new Date()): Promise<number> {
  return applyTrigger(db, 'expire', now);
}

export const contractLifecycleTask: WorkerTask = {
  name: 'contract-lifecycle',
  intervalMs: 60_000,
  async run({ database }) {
    const now = new Date();
    // Activation first, so a contract whose whole term is already past ends expired in one run.
    const activated = await activateDueContracts(database.db, now);
    const expired = await expireEndedContracts(database.db, now);
    return activated + expired;
  },
};
