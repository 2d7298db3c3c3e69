import { and, eq, inArray, sql } from 'drizzle-orm';
import type { WorkerTask } from '../../background/runner.js';
import type { Db } from '../../db/client.js';
import { rowsOf } from '../../db/client.js';
import { contracts } from '../../db/schema/index.js';
import { asPlatform } from '../../platform/cross-tenant.js';
import { inTenant, systemActor } from '../../platform/tenancy.js';
import { recordContractActivity } from './contracts.service.js';

/** The worker's actor; its activity entries carry no actor id (recorded with null). */
const SYSTEM = systemActor('contract-lifecycle');
const BATCH = 500;

type Move = { from: 'signed'; to: 'active' } | { from: 'active'; to: 'expired' };

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
    move.to === 'active'
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
  const due = await dueContracts(db, move, now);
  const byOrg = new Map<string, string[]>();
  for (const r of due) byOrg.set(r.organization_id, [...(byOrg.get(r.organization_id) ?? []), r.id]);
  let moved = 0;
  for (const [organizationId, ids] of byOrg) {
    moved += await inTenant(db, organizationId, SYSTEM, async (ctx) => {
      // The status condition is the claim: of several workers racing, one UPDATE
      // returns the row and writes the activity; the others find it already moved.
      const changed = await ctx.tx
        .update(contracts)
        .set({
          status: move.to,
          ...(move.to === 'active' ? { activatedAt: now } : { expiredAt: now }),
          updatedAt: now,
        })
        .where(
          and(
            eq(contracts.organizationId, organizationId),
            inArray(contracts.id, ids),
            eq(contracts.status, move.from),
          ),
        )
        .returning({ id: contracts.id, startDate: contracts.startDate, endDate: contracts.endDate });
      for (const c of changed) {
        const description =
          move.to === 'active'
            ? `Activated: term started${c.startDate ? ` ${c.startDate}` : ''}`
            : `Expired: term ended ${c.endDate}`;
        await recordContractActivity(ctx, c.id, move.to === 'active' ? 'activated' : 'expired', description, null);
      }
      return changed.length;
    });
  }
  return moved;
}

/** signed → active for contracts whose term has started (org timezone). */
export function activateDueContracts(db: Db, now: Date = new Date()): Promise<number> {
  return apply(db, { from: 'signed', to: 'active' }, now);
}

/** active → expired for contracts whose endDate has passed (org timezone). */
export function expireEndedContracts(db: Db, now: Date = new Date()): Promise<number> {
  return apply(db, { from: 'active', to: 'expired' }, now);
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
