import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { rowsOf } from '../../../db/client.js';
import { jobSchedules, type ScheduleLine } from '../../../db/schema/index.js';
import { withCalendarDates } from '../../../platform/calendar-date.js';
import { invalidField } from '../../../platform/errors.js';
import { fromCents, lineAmountCents, MAX_TOTAL_CENTS } from '../../../platform/money.js';
import type { Ctx } from '../../../platform/tenancy.js';
import { type ScheduleRow, scheduleContext } from './schedules.service.js';
import type { ScheduleStatus } from './schedules.states.js';
import { editableVisit, rewriteVisits } from './schedules.visits.js';

/*
 * A catalog price carried to the schedules whose lines name the service (operations.md §9,
 * "Repricing a service"; the flow src/flows/reprice-service.ts). A schedule's lines are
 * what its visits copy, so the new price reaches its visits exactly as a PATCH of its
 * lines would, but only from `from` on: the visits still scheduled, dated on or after
 * `from`, not invoiced and not edited one by one take it; earlier, started, completed,
 * invoiced and hand-edited visits keep the price they were made with.
 *
 * `from` lies between today and the end of the visit horizon (today + visitHorizonDays):
 * every visit before it is already made at the old price, and every visit made later is
 * made at the schedule's (new) price. A date past the horizon would need a price waiting
 * on the schedule for visits not made yet, which schedules do not hold.
 */

export interface RepricedLine {
  index: number;
  description: string;
  quantity: number;
  oldUnitPrice: number;
  unitPrice: number;
  oldAmount: number;
  amount: number;
}

export interface RepricedSchedule {
  id: string;
  title: string;
  customerId: string;
  status: Exclude<ScheduleStatus, 'ended'>;
  lines: RepricedLine[];
  oldTotal: number;
  total: number;
  visitsRepriced: number;
}

const sumOf = (lines: ScheduleLine[]) => lines.reduce((s, l) => s + l.amountCents, 0);

/** `from` (default today) as a calendar date in the organization's timezone, checked against the horizon. */
export async function repriceWindow(ctx: Ctx, given: string | undefined) {
  const w = await scheduleContext(ctx);
  const { from } = await withCalendarDates({ from: given ?? w.today }, ['from'], async () => w.timezone);
  if (from < w.today) {
    throw invalidField('from', `must not be before today (${w.today} in the organization's timezone)`);
  }
  if (from > w.horizonEnd) {
    throw invalidField(
      'from',
      `must be on or before ${w.horizonEnd}, the end of the visit horizon (visitHorizonDays): visits after it are not made yet, so reprice closer to the date`,
    );
  }
  return { ...w, from };
}

/**
 * Sets `unitPriceCents` on every line naming `serviceId` of the organization's active and
 * paused schedules (ended ones never change), and rewrites their editable visits from `from`.
 * With `dryRun`, writes nothing and answers the same (the visits that would change).
 * Schedules whose lines already have that price are left out.
 */
export async function repriceSchedules(
  ctx: Ctx,
  input: { serviceId: string; unitPriceCents: number; from: string; timezone: string; dryRun: boolean },
): Promise<RepricedSchedule[]> {
  const rows: ScheduleRow[] = await ctx.tx
    .select()
    .from(jobSchedules)
    .where(
      and(
        eq(jobSchedules.organizationId, ctx.organizationId),
        inArray(jobSchedules.status, ['active', 'paused']),
        sql`${jobSchedules.lineItems} @> ${JSON.stringify([{ serviceId: input.serviceId }])}::jsonb`,
      ),
    )
    .orderBy(asc(jobSchedules.createdAt), asc(jobSchedules.id))
    .for('update');
  const out: RepricedSchedule[] = [];
  for (const r of rows) {
    const lines: RepricedLine[] = [];
    const lineItems = r.lineItems.map((l, index) => {
      if (l.serviceId !== input.serviceId || l.unitPriceCents === input.unitPriceCents) return l;
      const amountCents = lineAmountCents(l.quantity, input.unitPriceCents);
      lines.push({
        index,
        description: l.description,
        quantity: l.quantity,
        oldUnitPrice: fromCents(l.unitPriceCents),
        unitPrice: fromCents(input.unitPriceCents),
        oldAmount: fromCents(l.amountCents),
        amount: fromCents(amountCents),
      });
      return { ...l, unitPriceCents: input.unitPriceCents, amountCents };
    });
    if (lines.length === 0) continue;
    if (sumOf(lineItems) > MAX_TOTAL_CENTS) {
      throw invalidField('unitPrice', `would bring schedule ${r.id}'s visit total above 1,000,000,000`);
    }
    let visitsRepriced: number;
    if (input.dryRun) {
      const [row] = rowsOf<{ n: number | string }>(
        await ctx.tx.execute(sql`SELECT count(*) AS n FROM jobs j
          WHERE j.organization_id = ${ctx.organizationId} AND j.schedule_id = ${r.id} AND ${editableVisit(input.from)}`),
      );
      visitsRepriced = Number(row?.n ?? 0);
    } else {
      await ctx.tx
        .update(jobSchedules)
        .set({ lineItems, updatedAt: new Date() })
        .where(and(eq(jobSchedules.organizationId, ctx.organizationId), eq(jobSchedules.id, r.id)));
      // Editable visits dated on or after `from` (the schedule's copy, as a PATCH makes it).
      visitsRepriced = (await rewriteVisits(ctx, r.id, input.from, input.timezone, false)).size;
    }
    out.push({
      id: r.id,
      title: r.title,
      customerId: r.customerId,
      status: r.status as Exclude<ScheduleStatus, 'ended'>,
      lines,
      oldTotal: fromCents(sumOf(r.lineItems)),
      total: fromCents(sumOf(lineItems)),
      visitsRepriced,
    });
  }
  return out;
}
