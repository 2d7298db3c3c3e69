import { and, asc, eq, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../../../db/client.js';
import { rowsOf } from '../../../db/client.js';
import { contracts, jobSchedules, jobs, organizations, type ScheduleBilling } from '../../../db/schema/index.js';
import { asPlatform } from '../../../platform/cross-tenant.js';
import { invalidField } from '../../../platform/errors.js';
import { fromCents } from '../../../platform/money.js';
import type { Ctx } from '../../../platform/tenancy.js';
import { storedRecurrence } from './recurrence.js';

/*
 * What billing reads about schedules (operations.md §9, "Billing the work"): a visit's
 * billing mode, the visits a monthly batch bills, the installment plans that may be
 * due. The bills themselves are made by the flows in src/flows/ (update-job.ts,
 * bill-schedules.ts) through the invoices module; the one write here is the worker's
 * note of a schedule's next installment date (recordNextInstallment).
 */

/** The billing of the schedule a visit came from (null for a one-off job or a removed schedule). */
export async function scheduleBillingOf(ctx: Ctx, scheduleId: string): Promise<ScheduleBilling | null> {
  const [row] = await ctx.tx
    .select({ billing: jobSchedules.billing })
    .from(jobSchedules)
    .where(and(eq(jobSchedules.organizationId, ctx.organizationId), eq(jobSchedules.id, scheduleId)));
  return row?.billing ?? null;
}

/** A condition on jobs: visits of this organization's schedules billed in `mode`. */
export const visitsBilledBy = (ctx: Ctx, mode: ScheduleBilling['mode']): SQL =>
  sql`${jobs.scheduleId} IN (SELECT s.id FROM job_schedules s WHERE s.organization_id = ${ctx.organizationId} AND s.billing->>'mode' = ${mode})`;

/** The schedules (ids) among `scheduleIds` whose batch billing sends its invoices at once. */
export async function autoSendingSchedules(ctx: Ctx, scheduleIds: string[]): Promise<Set<string>> {
  if (scheduleIds.length === 0) return new Set();
  const rows = rowsOf<{ id: string }>(
    await ctx.tx.execute(sql`SELECT id FROM job_schedules
      WHERE organization_id = ${ctx.organizationId} AND id = ANY(${sql.param(scheduleIds)}::text[])
        AND (billing->>'autoSend')::boolean IS TRUE`),
  );
  return new Set(rows.map((r) => r.id));
}

/**
 * Organizations with completed, unbilled, priced visits of batch-billed schedules
 * completed before this calendar month in their timezone (the previous month's, and any
 * earlier one that became billable late), across organizations, in one statement over the
 * partial index of unbilled completed jobs. Once billed, a visit drops out: the pass finds
 * nothing more until the next month. A late visit whose month is billed already keeps its
 * organization on this list (a no-op pass: its key is taken) until the next month's batch.
 */
export async function organizationsWithBatchVisits(db: Db, now: Date): Promise<string[]> {
  const at = sql`${now.toISOString()}::timestamptz`;
  const monthStart = sql`(date_trunc('month', ${at} AT TIME ZONE o.timezone) AT TIME ZONE o.timezone)`;
  const rows = rowsOf<{ organization_id: string }>(
    await asPlatform(db, (tx) =>
      tx.execute(sql`
        SELECT DISTINCT j.organization_id FROM jobs j
        JOIN organizations o ON o.id = j.organization_id
        JOIN job_schedules s ON s.id = j.schedule_id AND s.organization_id = j.organization_id
        WHERE j.status = 'completed' AND j.invoice_id IS NULL
          AND j.completed_at < ${monthStart}
          AND jsonb_array_length(j.line_items) > 0
          AND s.billing->>'mode' = 'batch'`),
    ),
  );
  return rows.map((r) => r.organization_id);
}

export interface InstallmentSchedule extends PlanSource {
  id: string;
  organizationId: string;
  customerId: string;
  propertyId: string | null;
  title: string;
  billing: Extract<ScheduleBilling, { mode: 'installments' }>;
}

/**
 * Active installment-billed schedules with an installment due: dated today or earlier in
 * their organization's timezone and not made yet as far as the worker has recorded
 * (next_installment_date, NULL until a pass has worked it out: then billing.firstDate
 * decides), across organizations, in one statement whatever the number of schedules.
 * Which of their installments are still to make is the invoices module's key table's
 * answer. A paused or ended schedule bills nothing; one resumed makes what fell due
 * meanwhile (its recorded date stayed in the past).
 */
export async function dueInstallmentSchedules(db: Db, now: Date): Promise<InstallmentSchedule[]> {
  const at = sql`${now.toISOString()}::timestamptz`;
  const orgToday = sql`(${at} AT TIME ZONE ${organizations.timezone})::date`;
  // No timezone is more than a day ahead of UTC: a bound on the column alone, so the
  // partial index job_schedules_installments_due_idx answers the idle pass.
  const latest = sql`(${at} AT TIME ZONE 'UTC')::date + 1`;
  const rows = await asPlatform(db, (tx) =>
    tx
      .select()
      .from(jobSchedules)
      .innerJoin(organizations, eq(organizations.id, jobSchedules.organizationId))
      .where(
        and(
          eq(jobSchedules.status, 'active'),
          sql`${jobSchedules.billing}->>'mode' = 'installments'`,
          sql`(${jobSchedules.nextInstallmentDate} IS NULL OR ${jobSchedules.nextInstallmentDate} <= ${latest})`,
          sql`COALESCE(${jobSchedules.nextInstallmentDate}, (${jobSchedules.billing}->>'firstDate')::date) <= ${orgToday}`,
        ),
      )
      .orderBy(asc(jobSchedules.organizationId), asc(jobSchedules.id)),
  );
  return rows.map(({ job_schedules: r }) => ({
    id: r.id,
    organizationId: r.organizationId,
    customerId: r.customerId,
    propertyId: r.propertyId,
    title: r.title,
    billing: r.billing as InstallmentSchedule['billing'],
    contractId: r.contractId,
    lineItems: r.lineItems,
    rrule: r.rrule,
    startDate: r.startDate,
    endDate: r.endDate,
  }));
}

/**
 * The worker's note that every installment of `schedule` dated before `nextDate` is made
 * (`null`: all of them), so its passes skip the schedule until then. Written only while
 * the schedule's billing is still the one the plan came from: an edit meanwhile reset the
 * date (updateSchedule) and the next pass works it out again from the new billing.
 */
export async function recordNextInstallment(
  ctx: Ctx,
  schedule: Pick<InstallmentSchedule, 'id' | 'billing'>,
  nextDate: string | null,
): Promise<void> {
  await ctx.tx
    .update(jobSchedules)
    .set({ nextInstallmentDate: nextDate ?? 'infinity' })
    .where(
      and(
        eq(jobSchedules.organizationId, ctx.organizationId),
        eq(jobSchedules.id, schedule.id),
        sql`${jobSchedules.billing} = ${JSON.stringify(schedule.billing)}::jsonb`,
      ),
    );
}

/** What an installment plan's total is computed from: the schedule's own fields. */
export interface PlanSource {
  billing: ScheduleBilling;
  contractId: string | null;
  lineItems: Array<{ amountCents: number }>;
  rrule: string;
  startDate: string;
  endDate: string | null;
}

/**
 * The season's total an installment plan splits (operations.md §9), in cents: the
 * given amounts' sum; else the contract's totalValue; else one visit's lines × the
 * rule's occurrences. Null when there is nothing to compute it from (no amounts, no
 * contract value, and no lines or a rule that never ends).
 */
export async function installmentTotalCents(ctx: Ctx, s: PlanSource): Promise<number | null> {
  if (s.billing.mode !== 'installments') return null;
  if (s.billing.amountsCents) return s.billing.amountsCents.reduce((a, b) => a + b, 0);
  const contractValue = s.contractId !== null ? await contractValueCents(ctx, s.contractId) : 0;
  if (contractValue > 0) return contractValue;
  const perVisit = s.lineItems.reduce((sum, l) => sum + l.amountCents, 0);
  const occurrences = storedRecurrence(s.rrule, s.startDate, s.endDate).total();
  if (perVisit === 0 || occurrences === null) return null;
  return perVisit * occurrences;
}

async function contractValueCents(ctx: Ctx, contractId: string): Promise<number> {
  const [row] = await ctx.tx
    .select({ cents: contracts.totalValueCents })
    .from(contracts)
    .where(and(eq(contracts.organizationId, ctx.organizationId), eq(contracts.id, contractId)));
  return row?.cents ?? 0;
}

/**
 * A schedule's installment billing must have a total to split, and given amounts
 * must add up to the contract's totalValue when it has one: else 400 naming the field.
 */
export async function checkInstallmentTotal(ctx: Ctx, s: PlanSource): Promise<void> {
  if (s.billing.mode !== 'installments') return;
  if (s.billing.amountsCents && s.contractId !== null) {
    const value = await contractValueCents(ctx, s.contractId);
    const sum = s.billing.amountsCents.reduce((a, b) => a + b, 0);
    if (value > 0 && sum !== value) {
      throw invalidField(
        'billing.amounts',
        `add up to ${fromCents(sum).toFixed(2)}, not the contract's totalValue ${fromCents(value).toFixed(2)}`,
      );
    }
  }
  if ((await installmentTotalCents(ctx, s)) === null) {
    throw invalidField(
      'billing.amounts',
      'are needed: no contract totalValue to split, and the lines × occurrences of a rule without an end (COUNT, UNTIL or endDate) have no total',
    );
  }
}
