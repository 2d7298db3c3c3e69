import { addDays, startOfDayIn, today as todayIn } from '../../platform/dates.js';
import { invalidField } from '../../platform/errors.js';
import { fromCents } from '../../platform/money.js';
import type { Ctx } from '../../platform/tenancy.js';
import { payableFigures } from '../bills/bills.refs.js';
import { contractAnalytics } from '../contracts/contracts.service.js';
import { crewHours } from '../crew-tracking/crew-tracking.refs.js';
import { estimateFigures } from '../estimates/estimates.refs.js';
import { invoicedCents, invoicedCentsByPeriod, receivableFigures } from '../invoices/invoices.refs.js';
import { jobFigures } from '../jobs/jobs.refs.js';
import { collectedCents, collectedCentsByPeriod } from '../payments/payments.refs.js';
import { orgTimezone } from '../settings/settings.service.js';
import { winterFigures } from '../winter-routes/winter-routes.refs.js';
import type { DashboardQueryT, DashboardT, Interval, RevenueQueryT } from './dashboard.schemas.js';

/*
 * The dashboard (operations.md §7). Every figure is an SQL aggregate computed by the
 * module that owns the table (its `.refs.ts`), over an index led by organization_id;
 * this module only picks the range, in the organization's timezone, and turns cents
 * into decimals. Nothing here loads rows to add them up.
 */

/** The first day of the month of `date`, plus `months` months. */
function monthStart(date: string, months = 0): string {
  const [y, m] = date.split('-').map(Number) as [number, number];
  const index = y * 12 + (m - 1) + months;
  return `${String(Math.floor(index / 12)).padStart(4, '0')}-${String((index % 12) + 1).padStart(2, '0')}-01`;
}

function checkOrder(from: string, to: string) {
  if (from > to) throw invalidField('to', `must not be before from (${from})`);
}

export async function dashboard(ctx: Ctx, q: DashboardQueryT, now = new Date()): Promise<DashboardT> {
  const timezone = await orgTimezone(ctx);
  const today = todayIn(timezone, now);
  const from = q.from ?? monthStart(today);
  const to = q.to ?? addDays(monthStart(today, 1), -1);
  checkOrder(from, to);
  // The range as instants, for columns that are timestamps: [start of from, start of the day after to).
  const start = startOfDayIn(from, timezone);
  const end = startOfDayIn(addDays(to, 1), timezone);

  const invoiced = await invoicedCents(ctx, from, to);
  const collected = await collectedCents(ctx, from, to, timezone);
  const receivables = await receivableFigures(ctx, today);
  const payables = await payableFigures(ctx, today);
  const jobs = await jobFigures(ctx, { from, to, start, end }, today);
  const estimates = await estimateFigures(ctx, start, end);
  const contracts = await contractAnalytics(ctx);
  const crew = await crewHours(ctx, start, end);
  const winter = await winterFigures(ctx, start, end);

  return {
    revenue: { invoiced: fromCents(invoiced), collected: fromCents(collected) },
    receivables: {
      outstanding: fromCents(receivables.outstandingCents),
      overdueAmount: fromCents(receivables.overdueCents),
      overdueCount: receivables.overdueCount,
      aging: {
        current: fromCents(receivables.aging.current),
        days1to30: fromCents(receivables.aging.days1to30),
        days31to60: fromCents(receivables.aging.days31to60),
        days61to90: fromCents(receivables.aging.days61to90),
        over90: fromCents(receivables.aging.over90),
      },
    },
    payables: {
      outstanding: fromCents(payables.outstandingCents),
      dueNext7Days: fromCents(payables.dueNext7DaysCents),
    },
    jobs,
    estimates: {
      sent: estimates.sent,
      approved: estimates.approved,
      conversionRate: estimates.sent === 0 ? 0 : Math.round((estimates.approved / estimates.sent) * 10_000) / 10_000,
    },
    contracts: { active: contracts.byStatus.active, activeRevenue: contracts.activeRevenue },
    crew,
    winter,
  };
}

/** At most this many periods per request (ten years of months, or about three years of days). */
export const MAX_PERIODS = 1000;

/** The first day of the period holding `date`: itself, its Monday, or the 1st of its month. */
export function periodStart(interval: Interval, date: string): string {
  if (interval === 'day') return date;
  if (interval === 'month') return monthStart(date);
  const weekday = new Date(`${date}T00:00:00Z`).getUTCDay(); // 0 = Sunday
  return addDays(date, -((weekday + 6) % 7));
}

function nextPeriod(interval: Interval, start: string): string {
  if (interval === 'day') return addDays(start, 1);
  if (interval === 'week') return addDays(start, 7);
  return monthStart(start, 1);
}

/** The start of every period from the one holding `from` to the one holding `to`; too many → 400. */
export function periodsOf(interval: Interval, from: string, to: string): string[] {
  const out: string[] = [];
  for (let p = periodStart(interval, from); p <= to; p = nextPeriod(interval, p)) {
    if (out.length === MAX_PERIODS) {
      throw invalidField('from', `the range holds more than ${MAX_PERIODS} ${interval} periods; narrow it`);
    }
    out.push(p);
  }
  return out;
}

export async function revenueSeries(ctx: Ctx, q: RevenueQueryT, now = new Date()) {
  const timezone = await orgTimezone(ctx);
  const today = todayIn(timezone, now);
  const interval = q.interval ?? 'month';
  const from = q.from ?? monthStart(today, -11);
  const to = q.to ?? today;
  checkOrder(from, to);
  const periods = periodsOf(interval, from, to);
  const invoiced = await invoicedCentsByPeriod(ctx, interval, from, to);
  const collected = await collectedCentsByPeriod(ctx, interval, from, to, timezone);
  return periods.map((period) => ({
    period,
    invoiced: fromCents(invoiced.get(period) ?? 0),
    collected: fromCents(collected.get(period) ?? 0),
  }));
}
