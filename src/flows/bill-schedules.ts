import type { WorkerTask } from '../background/runner.js';
import type { Db } from '../db/client.js';
import { claimBillingKeys, existingBillingKeys, recordBillingKeys } from '../modules/invoices/invoices.billing-keys.js';
import { billInstallment, installmentPlan } from '../modules/invoices/invoices.installments.js';
import type { InvoiceDetailView, SendDeps } from '../modules/invoices/invoices.service.js';
import { type BillableJob, lockUnbilledJobs } from '../modules/jobs/jobs.billing.js';
import {
  autoSendingSchedules,
  dueInstallmentSchedules,
  type InstallmentSchedule,
  installmentTotalCents,
  organizationsWithBatchVisits,
  recordNextInstallment,
  visitsBilledBy,
} from '../modules/jobs/schedules/schedules.billing.js';
import { getOrgSettings } from '../modules/settings/settings.service.js';
import { addDays, startOfDayIn, today } from '../platform/dates.js';
import { type Ctx, inTenant, systemActor } from '../platform/tenancy.js';
import { billJobs, previousMonth } from './bill-jobs.js';

/*
 * The worker's side of a schedule's billing (operations.md §9, "Billing the work"):
 * `batch` schedules' visits of the previous month on the first of the month, and
 * `installments` on their dates. (`per_visit` is billed when the visit is completed:
 * update-job.ts.) Every bill is claimed by a unique key in the invoices module's
 * invoice_billing_keys before it is made, so the worker on two processes makes each once.
 */

const SYSTEM = systemActor('schedule-billing');

/** One invoice per customer and month of batch billing. */
export const batchKey = (month: string, customerId: string) => `schedules:batch:${month}:${customerId}`;
/** One invoice per installment of a schedule: `schedule:<id>:installment:<n>`. */
export const installmentKeyPrefix = (scheduleId: string) => `schedule:${scheduleId}`;

/**
 * The monthly batch of one organization, on the first of the month in its timezone
 * (or the first run after): the completed, unbilled, priced visits of its batch-billed
 * schedules completed in the previous month, one invoice per customer, sent when every
 * schedule it bills says autoSend. A visit of an earlier month that was not billable when
 * its month's batch ran (its lines were added later, or its completion committed after the
 * batch) goes on the customer's next batch with that month's visits: the batch takes every
 * unbilled visit completed before this month, under the key of the month just ended.
 *
 * jobs (the month's batch visits, locked) → invoices (a key per customer and month,
 * claimed) → bill-jobs.ts (invoices, jobs marked billed, sends) → invoices (keys → invoices).
 */
export async function billBatchVisits(ctx: Ctx, now: Date, deps: SendDeps): Promise<InvoiceDetailView[]> {
  const { timezone } = await getOrgSettings(ctx);
  const month = previousMonth(today(timezone, now));
  const visits = await lockUnbilledJobs(ctx, {
    to: startOfDayIn(addDays(month.to, 1), timezone),
    where: visitsBilledBy(ctx, 'batch'),
  });
  if (visits.length === 0) return [];
  const keyOf = (customerId: string) => batchKey(month.from.slice(0, 7), customerId);
  const won = await claimBillingKeys(ctx, [...new Set(visits.map((j) => keyOf(j.customerId)))]);
  const mine = visits.filter((j) => won.has(keyOf(j.customerId)));
  if (mine.length === 0) return [];
  const autoSend = await autoSendingSchedules(ctx, [...new Set(mine.map((j) => j.scheduleId as string))]);
  const send = (jobs: BillableJob[]) => jobs.every((j) => autoSend.has(j.scheduleId as string));
  const made = await billJobs(ctx, mine, { send }, deps);
  await recordBillingKeys(
    ctx,
    made.map((i) => ({ key: keyOf(i.customerId), invoiceId: i.id })),
  );
  return made;
}

/**
 * The installments of one schedule dated today or earlier that are not made yet: the
 * plan splits the season's total (installmentTotalCents) in `count` parts to the
 * exact cent; each part's invoice is claimed by its key (billInstallment). Then the
 * schedule records the date of its next installment, so passes before that date do not
 * select it. A schedule whose total cannot be computed any more (its lines were
 * removed) is left alone, its date unchanged: it bills what fell due once it can.
 *
 * jobs (the season's total) → invoices (keys made already; each missing installment)
 * → jobs (the next installment date).
 */
export async function billScheduleInstallments(
  ctx: Ctx,
  schedule: InstallmentSchedule,
  now: Date,
  deps: SendDeps,
): Promise<InvoiceDetailView[]> {
  const total = await installmentTotalCents(ctx, schedule);
  if (total === null) return [];
  const { billing } = schedule;
  const plan = installmentPlan(total, billing.count, billing.firstDate, billing.amountsCents);
  const { timezone } = await getOrgSettings(ctx);
  const todayDate = today(timezone, now);
  const prefix = installmentKeyPrefix(schedule.id);
  const due = plan.filter((p) => p.date <= todayDate);
  const made = await existingBillingKeys(
    ctx,
    due.map((p) => `${prefix}:installment:${p.number}`),
  );
  const invoices: InvoiceDetailView[] = [];
  for (const installment of due) {
    const key = `${prefix}:installment:${installment.number}`;
    if (made.has(key)) continue;
    const { created, invoice } = await billInstallment(
      ctx,
      {
        key,
        customerId: schedule.customerId,
        propertyId: schedule.propertyId,
        description: schedule.title,
        installment,
        count: plan.length,
      },
      deps,
    );
    if (created && invoice) invoices.push(invoice);
  }
  // Every installment up to today is made now (by this pass or an earlier one).
  await recordNextInstallment(ctx, schedule, plan.find((p) => p.date > todayDate)?.date ?? null);
  return invoices;
}

/**
 * One pass of the worker over every organization: the batches due and the
 * installments due, each organization in its own transaction. Returns the invoices made.
 * When nothing is due, the pass is its two cross-organization queries, whatever the
 * number of schedules (test/billing/schedule-billing-idle.test.ts).
 */
export async function billSchedules(db: Db, deps: SendDeps, now: Date = new Date()): Promise<number> {
  let made = 0;
  for (const organizationId of await organizationsWithBatchVisits(db, now)) {
    made += (await inTenant(db, organizationId, SYSTEM, (ctx) => billBatchVisits(ctx, now, deps))).length;
  }
  const byOrg = new Map<string, InstallmentSchedule[]>();
  for (const s of await dueInstallmentSchedules(db, now)) {
    byOrg.set(s.organizationId, [...(byOrg.get(s.organizationId) ?? []), s]);
  }
  for (const [organizationId, schedules] of byOrg) {
    made += await inTenant(db, organizationId, SYSTEM, async (ctx) => {
      let n = 0;
      for (const s of schedules) n += (await billScheduleInstallments(ctx, s, now, deps)).length;
      return n;
    });
  }
  return made;
}

export const scheduleBillingTask: WorkerTask = {
  name: 'schedule-billing',
  // The bills fall due on calendar dates: a pass every quarter hour makes them early on their day.
  intervalMs: 15 * 60_000,
  run: ({ database, config }) => billSchedules(database.db, { baseUrl: config.baseUrl }),
};
