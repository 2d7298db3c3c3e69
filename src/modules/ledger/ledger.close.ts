import { and, eq, sql } from 'drizzle-orm';
import { rowsOf } from '../../db/client.js';
import { ledgerCloses } from '../../db/schema/index.js';
import { addDays, today } from '../../platform/dates.js';
import { AppError, invalidField, invalidState } from '../../platform/errors.js';
import { emit } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import type { Ctx } from '../../platform/tenancy.js';
import { getOrgSettings } from '../settings/settings.service.js';

/*
 * Period close (operations.md §11). The organization's one `ledger_closes` row holds the day
 * its books are closed through. Every posting reads it through `ledger_close_lock`, which takes
 * it FOR SHARE until the posting's transaction ends; a close or reopen takes it FOR UPDATE. So
 * a close waits for the postings in flight to commit, and a posting that started after the
 * close waits for it and then sees the new date: no line ever lands in a closed period. Every
 * entry is inserted by postEntry, after that check (the trigger that backed it up is gone since
 * drizzle/0047: on Citus a trigger cannot read another distributed table; docs/scaling.md).
 */

/** The 409 for a date in the closed period, naming the request's field that carries it. */
export function periodClosed(field: string, date: string, closedThrough: string) {
  const message = `${date} lies in the closed period (the books are closed through ${closedThrough})`;
  return new AppError('PERIOD_CLOSED', `${field}: ${message}`, { details: [{ field, message }] });
}

/** The closed date, with the close row locked FOR SHARE until the transaction ends. */
export async function lockedClosedThrough(ctx: Ctx): Promise<string | null> {
  const result = await ctx.tx.execute(sql`SELECT ledger_close_lock(${ctx.organizationId})::text AS d`);
  return rowsOf<{ d: string | null }>(result)[0]?.d ?? null;
}

/**
 * Refuses (409 PERIOD_CLOSED) a date on or before the closed date, and holds the close row
 * FOR SHARE so no close can slip in before the caller's transaction commits. For what is
 * dated without posting to the ledger itself (a deposit).
 */
export async function assertPeriodOpen(ctx: Ctx, checks: { field: string; date: string }[]): Promise<void> {
  const closed = await lockedClosedThrough(ctx);
  if (closed === null) return;
  for (const c of checks) if (c.date <= closed) throw periodClosed(c.field, c.date, closed);
}

/**
 * The date something a processor already did (Stripe took or gave back money, paid out to the
 * bank) is booked on: `date` itself while the books are open there, else the first open day,
 * today (the day after the closed date when the books are closed through today). Such a fact
 * cannot be refused like a request (a webhook answered 409 is retried and then dropped by
 * Stripe), and it cannot change a closed month either. Holds the close row FOR SHARE, as
 * assertPeriodOpen does.
 */
export async function openDateFor(ctx: Ctx, date: string): Promise<string> {
  const closed = await lockedClosedThrough(ctx);
  if (closed === null || date > closed) return date;
  const todayDate = today((await getOrgSettings(ctx)).timezone);
  return todayDate > closed ? todayDate : addDays(closed, 1);
}

export async function getClose(ctx: Ctx) {
  const [row] = await ctx.tx
    .select({ closedThrough: ledgerCloses.closedThrough })
    .from(ledgerCloses)
    .where(eq(ledgerCloses.organizationId, ctx.organizationId));
  return { closedThrough: row?.closedThrough ?? null };
}

/** The close row FOR UPDATE (created first if the organization never had one). */
async function lockForChange(ctx: Ctx) {
  await ctx.tx
    .insert(ledgerCloses)
    .values({ id: newId('lcl'), organizationId: ctx.organizationId })
    .onConflictDoNothing({ target: ledgerCloses.organizationId });
  const [row] = await ctx.tx
    .select()
    .from(ledgerCloses)
    .where(eq(ledgerCloses.organizationId, ctx.organizationId))
    .for('update');
  return row as typeof ledgerCloses.$inferSelect;
}

async function setClosedThrough(ctx: Ctx, id: string, closedThrough: string | null) {
  await ctx.tx
    .update(ledgerCloses)
    .set({ closedThrough, updatedBy: ctx.actor.id, updatedAt: new Date() })
    .where(and(eq(ledgerCloses.organizationId, ctx.organizationId), eq(ledgerCloses.id, id)));
}

/** Closes the books through `through`: not after today (organization timezone), not before the current close. */
export async function closePeriod(ctx: Ctx, through: string) {
  const todayDate = today((await getOrgSettings(ctx)).timezone);
  if (through > todayDate) throw invalidField('through', `must not be after today (${todayDate})`);
  const row = await lockForChange(ctx);
  const current = row.closedThrough;
  if (current !== null && through < current) {
    throw invalidField('through', `must not be before the current closed date (${current}); reopen to move it back`);
  }
  if (current !== through) {
    await setClosedThrough(ctx, row.id, through);
    await emit(ctx, 'ledger.period_closed', {
      closedThrough: through,
      previousClosedThrough: current,
      periodClose: { closedThrough: through },
    });
  }
  return { closedThrough: through };
}

/** Reopens back to `through` (earlier than the current close) or entirely (null). Owner only, at the route. */
export async function reopenPeriod(ctx: Ctx, through: string | null) {
  const row = await lockForChange(ctx);
  const current = row.closedThrough;
  if (current === null) throw invalidState('The books are not closed; there is nothing to reopen');
  if (through !== null && through >= current) {
    throw invalidField('through', `must be earlier than the current closed date (${current}), or null`);
  }
  await setClosedThrough(ctx, row.id, through);
  return { closedThrough: through };
}
