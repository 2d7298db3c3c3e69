import { and, eq, inArray, type SQL, sql } from 'drizzle-orm';
import { contracts, jobScheduleSkips, jobSchedules, jobs, type ScheduleBilling } from '../../../db/schema/index.js';
import { withCalendarDates } from '../../../platform/calendar-date.js';
import { addDays, stamp, today as todayIn } from '../../../platform/dates.js';
import { invalidField, invalidState } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import { fromCents, toCents } from '../../../platform/money.js';
import { ownedRows } from '../../../platform/owned-rows.js';
import { listPage } from '../../../platform/page-query.js';
import type { Page } from '../../../platform/pagination.js';
import { canTake, next, take, withArticle } from '../../../platform/state-machine.js';
import type { Ctx } from '../../../platform/tenancy.js';
import { type LineItemInputT, priceLines } from '../../billing/line-items.js';
import { requireCrew } from '../../crew-tracking/crew-tracking.refs.js';
import { requireCustomer, requireProperty } from '../../customers/customers.refs.js';
import { getOrgSettings } from '../../settings/settings.service.js';
import { emitTransition, getJob, requireMembers } from '../jobs.service.js';
import { type JobStatus, jobMachine } from '../jobs.states.js';
import { type Recurrence, recurrence, storedRecurrence } from './recurrence.js';
import { checkInstallmentTotal } from './schedules.billing.js';
import { type ScheduleStatus, type ScheduleTrigger, scheduleMachine } from './schedules.states.js';
import { makeVisits, removeVisits, rewriteVisits } from './schedules.visits.js';

export type ScheduleRow = typeof jobSchedules.$inferSelect;

/*
 * Recurring schedules (operations.md §9). Every change locks the schedule row, so
 * changes of one schedule apply one after the other; the visits themselves are made
 * once by the jobs' unique (schedule_id, occurrence_date) index, whoever makes them.
 */

export function scheduleView(r: ScheduleRow) {
  return {
    id: r.id,
    customerId: r.customerId,
    propertyId: r.propertyId,
    contractId: r.contractId,
    title: r.title,
    rrule: r.rrule,
    startDate: r.startDate,
    endDate: r.endDate,
    startTime: r.startTime,
    durationMinutes: r.durationMinutes,
    assignedTo: r.assignedTo,
    crewId: r.crewId,
    lineItems: r.lineItems.map((l) => ({
      serviceId: l.serviceId,
      description: l.description,
      quantity: l.quantity,
      unitPrice: fromCents(l.unitPriceCents),
      taxable: l.taxable,
      amount: fromCents(l.amountCents),
    })),
    total: fromCents(r.lineItems.reduce((sum, l) => sum + l.amountCents, 0)),
    checklist: r.checklist,
    notes: r.notes,
    billing: billingView(r.billing),
    status: r.status as ScheduleStatus,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

function billingView(b: ScheduleBilling) {
  if (b.mode !== 'installments') return b;
  const { amountsCents, ...rest } = b;
  return { ...rest, ...(amountsCents ? { amounts: amountsCents.map(fromCents) } : {}) };
}

export type BillingInput =
  | { mode: 'per_visit' | 'batch'; autoSend?: boolean | undefined }
  | { mode: 'installments'; amounts?: number[] | undefined; count: number; firstDate: string; every: 'month' }
  | { mode: 'none' };

/** §9's billing shapes, money in cents; a refusal names the field. */
async function checkBilling(ctx: Ctx, b: BillingInput): Promise<ScheduleBilling> {
  if (b.mode !== 'installments') return b.mode === 'none' ? { mode: 'none' } : ({ ...b } as ScheduleBilling);
  const { firstDate } = await withCalendarDates(
    { firstDate: b.firstDate },
    ['firstDate'],
    async () => (await getOrgSettings(ctx)).timezone,
  );
  if (b.amounts !== undefined && b.amounts.length !== b.count) {
    throw invalidField('billing.amounts', `must have count (${b.count}) amounts, has ${b.amounts.length}`);
  }
  const amountsCents = b.amounts?.map((a, i) => toCents(a, `billing.amounts.${i}`));
  return { mode: 'installments', count: b.count, firstDate, every: 'month', ...(amountsCents ? { amountsCents } : {}) };
}

/** Today and the horizon's last day, in the organization's timezone. */
export async function scheduleContext(ctx: Ctx, now: Date = new Date()) {
  const settings = await getOrgSettings(ctx);
  const today = todayIn(settings.timezone, now);
  return { timezone: settings.timezone, today, horizonEnd: addDays(today, settings.visitHorizonDays) };
}
export type Window = Awaited<ReturnType<typeof scheduleContext>>;

export const ruleOf = (r: Pick<ScheduleRow, 'rrule' | 'startDate' | 'endDate'>) =>
  storedRecurrence(r.rrule, r.startDate, r.endDate);

/** The visits an active schedule should have from `from` (default today) to the horizon. */
export function plannedDates(rule: Recurrence, r: ScheduleRow, w: Window, from = w.today): string[] {
  const start = [from, w.today, r.startDate].sort().at(-1) as string;
  return rule.between(start, w.horizonEnd);
}

const scheduleRows = ownedRows(jobSchedules, 'Schedule');
const lockSchedule = (ctx: Ctx, id: string): Promise<ScheduleRow> => scheduleRows.find(ctx, id, true);

async function detailOf(ctx: Ctx, r: ScheduleRow, w?: Window) {
  const window = w ?? (await scheduleContext(ctx));
  const nextOccurrences =
    r.status === 'ended' && r.endDate !== null && r.endDate < window.today ? [] : ruleOf(r).next(10, window.today);
  const skips =
    nextOccurrences.length === 0
      ? []
      : await ctx.tx
          .select({ date: jobScheduleSkips.occurrenceDate })
          .from(jobScheduleSkips)
          .where(
            and(
              eq(jobScheduleSkips.organizationId, ctx.organizationId),
              eq(jobScheduleSkips.scheduleId, r.id),
              inArray(jobScheduleSkips.occurrenceDate, nextOccurrences),
            ),
          );
  const skipped = new Set(skips.map((s) => s.date));
  return { ...scheduleView(r), nextOccurrences, skippedDates: nextOccurrences.filter((d) => skipped.has(d)) };
}

/** The contract a schedule follows: this customer's, not finished. 400 on contractId otherwise. */
async function requireContract(ctx: Ctx, id: string, customerId: string) {
  const [row] = await ctx.tx
    .select({ id: contracts.id, customerId: contracts.customerId, status: contracts.status })
    .from(contracts)
    .where(and(eq(contracts.organizationId, ctx.organizationId), eq(contracts.id, id)));
  if (!row) throw invalidField('contractId', `no contract ${id}`);
  if (row.customerId !== customerId) throw invalidField('contractId', `contract ${id} is another customer's`);
  if (row.status === 'expired' || row.status === 'canceled') {
    throw invalidField('contractId', `contract ${id} is ${row.status}`);
  }
  const [taken] = await ctx.tx
    .select({ id: jobSchedules.id })
    .from(jobSchedules)
    .where(and(eq(jobSchedules.organizationId, ctx.organizationId), eq(jobSchedules.contractId, id)));
  if (taken) throw invalidField('contractId', `contract ${id} already has schedule ${taken.id}`);
  return row;
}

async function priceScheduleLines(ctx: Ctx, items: LineItemInputT[]) {
  // Priced exactly as invoice lines (catalog defaults, decimals, rounding); tax is the invoice's business.
  if (items.length === 0) return [];
  return (await priceLines(ctx, items, 0)).lines;
}

export interface CreateScheduleInput {
  customerId: string;
  propertyId?: string | undefined;
  contractId?: string | undefined;
  title: string;
  rrule: string;
  startDate: string;
  endDate?: string | undefined;
  startTime?: string | undefined;
  durationMinutes?: number | undefined;
  assignedTo?: string[] | undefined;
  crewId?: string | undefined;
  lineItems?: LineItemInputT[] | undefined;
  checklist?: string[] | undefined;
  notes?: string | undefined;
  billing: BillingInput;
}

export async function createSchedule(ctx: Ctx, body: CreateScheduleInput) {
  const w = await scheduleContext(ctx);
  const input = await withCalendarDates(body, ['startDate', 'endDate'], async () => w.timezone);
  // Everything is checked before the first write: a refused request writes nothing.
  await requireCustomer(ctx, input.customerId);
  if (input.propertyId !== undefined) await requireProperty(ctx, input.customerId, input.propertyId);
  const contract =
    input.contractId !== undefined ? await requireContract(ctx, input.contractId, input.customerId) : null;
  if (input.endDate !== undefined && input.endDate < input.startDate) {
    throw invalidField('endDate', 'must not be before startDate');
  }
  recurrence(input.rrule, input.startDate, input.endDate ?? null);
  await requireMembers(ctx, input.assignedTo ?? []);
  if (input.crewId !== undefined) await requireCrew(ctx, input.crewId);
  const lineItems = await priceScheduleLines(ctx, input.lineItems ?? []);
  const billing = await checkBilling(ctx, input.billing);
  await checkInstallmentTotal(ctx, {
    billing,
    contractId: input.contractId ?? null,
    lineItems,
    rrule: input.rrule,
    startDate: input.startDate,
    endDate: input.endDate ?? null,
  });

  // A contract's schedule waits, paused, until the contract is active.
  const status: ScheduleStatus = contract && contract.status !== 'active' ? 'paused' : 'active';
  const now = new Date();
  const [row] = await ctx.tx
    .insert(jobSchedules)
    .values({
      id: newId('sch'),
      organizationId: ctx.organizationId,
      customerId: input.customerId,
      propertyId: input.propertyId ?? null,
      contractId: input.contractId ?? null,
      title: input.title.trim(),
      rrule: input.rrule
        .trim()
        .replace(/^RRULE:/i, '')
        .toUpperCase(),
      startDate: input.startDate,
      endDate: input.endDate ?? null,
      startTime: input.startTime ?? null,
      durationMinutes: input.durationMinutes ?? null,
      assignedTo: input.assignedTo ?? [],
      crewId: input.crewId ?? null,
      lineItems,
      checklist: (input.checklist ?? []).map((c) => c.trim()),
      notes: input.notes ?? null,
      billing,
      status,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  const schedule = row as ScheduleRow;
  if (status === 'active') await fillHorizon(ctx, schedule, w);
  return detailOf(ctx, schedule, w);
}

/** Makes the visits from today to the horizon and records how far they go. */
async function fillHorizon(ctx: Ctx, r: ScheduleRow, w: Window): Promise<number> {
  const added = await makeVisits(ctx, [{ scheduleId: r.id, dates: plannedDates(ruleOf(r), r, w) }], w.timezone);
  await ctx.tx
    .update(jobSchedules)
    .set({ generatedThrough: w.horizonEnd })
    .where(and(eq(jobSchedules.organizationId, ctx.organizationId), eq(jobSchedules.id, r.id)));
  return added;
}

export async function getSchedule(ctx: Ctx, id: string) {
  return detailOf(ctx, await scheduleRows.find(ctx, id));
}

export async function listSchedules(
  ctx: Ctx,
  q: { status?: ScheduleStatus | undefined; customerId?: string | undefined; contractId?: string | undefined },
  page: Page,
) {
  const where: SQL[] = [eq(jobSchedules.organizationId, ctx.organizationId)];
  if (q.status) where.push(eq(jobSchedules.status, q.status));
  if (q.customerId) where.push(eq(jobSchedules.customerId, q.customerId));
  if (q.contractId) where.push(eq(jobSchedules.contractId, q.contractId));
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, jobSchedules, and(...where), page);
  return { rows: rows.map(scheduleView), ...more };
}

export interface UpdateScheduleInput {
  title?: string | undefined;
  rrule?: string | undefined;
  endDate?: string | null | undefined;
  startTime?: string | null | undefined;
  durationMinutes?: number | null | undefined;
  assignedTo?: string[] | undefined;
  crewId?: string | null | undefined;
  lineItems?: LineItemInputT[] | undefined;
  checklist?: string[] | undefined;
  notes?: string | null | undefined;
  billing?: BillingInput | undefined;
}

export interface VisitChanges {
  updated: number;
  added: number;
  removed: number;
}

const changeOf = async (ctx: Ctx, r: ScheduleRow, w: Window, visits: VisitChanges) => ({
  schedule: await detailOf(ctx, r, w),
  visits,
});

async function saveSchedule(ctx: Ctx, id: string, patch: Partial<ScheduleRow>): Promise<ScheduleRow> {
  const [row] = await ctx.tx
    .update(jobSchedules)
    .set({ ...patch, updatedAt: new Date() })
    .where(scheduleRows.mine(ctx, id))
    .returning();
  return row as ScheduleRow;
}

/** Not an occurrence of `rule` any more, or past the end: the visits a rule change removes. */
const notIn = (dates: string[], endDate: string | null): SQL =>
  sql`(NOT (j.occurrence_date = ANY(${sql.param(dates)}::date[]))${endDate !== null ? sql` OR j.scheduled_date > ${endDate}::date` : sql``})`;

export async function updateSchedule(ctx: Ctx, id: string, body: UpdateScheduleInput) {
  const w = await scheduleContext(ctx);
  const input = await withCalendarDates(body, ['endDate'], async () => w.timezone);
  const current = await lockSchedule(ctx, id);
  if (current.status === 'ended') throw invalidState('An ended schedule cannot change');
  const endDate = input.endDate === undefined ? current.endDate : input.endDate;
  if (endDate !== null && endDate < current.startDate) throw invalidField('endDate', 'must not be before startDate');
  const rrule =
    input.rrule
      ?.trim()
      .replace(/^RRULE:/i, '')
      .toUpperCase() ?? current.rrule;
  const rule = recurrence(rrule, current.startDate, endDate);
  if (input.assignedTo) await requireMembers(ctx, input.assignedTo);
  if (input.crewId) await requireCrew(ctx, input.crewId);
  const patch: Partial<ScheduleRow> = {};
  if (input.lineItems !== undefined) patch.lineItems = await priceScheduleLines(ctx, input.lineItems);
  if (input.billing !== undefined) {
    patch.billing = await checkBilling(ctx, input.billing);
    // New installment dates: the billing worker works out the next one again on its next pass.
    patch.nextInstallmentDate = null;
  }
  if (input.title !== undefined) patch.title = input.title.trim();
  if (input.checklist !== undefined) patch.checklist = input.checklist.map((c) => c.trim());
  for (const key of ['startTime', 'durationMinutes', 'assignedTo', 'crewId', 'notes'] as const) {
    if (input[key] !== undefined) (patch as Record<string, unknown>)[key] = input[key];
  }
  patch.rrule = rrule;
  patch.endDate = endDate;
  if (
    input.billing !== undefined ||
    input.lineItems !== undefined ||
    input.rrule !== undefined ||
    input.endDate !== undefined
  ) {
    await checkInstallmentTotal(ctx, {
      billing: patch.billing ?? current.billing,
      contractId: current.contractId,
      lineItems: patch.lineItems ?? current.lineItems,
      rrule,
      startDate: current.startDate,
      endDate,
    });
  }
  const updated = await saveSchedule(ctx, id, patch);

  const visits: VisitChanges = { updated: 0, added: 0, removed: 0 };
  const ruleChanged = rrule !== current.rrule || endDate !== current.endDate;
  if (ruleChanged) {
    visits.removed = await removeVisits(ctx, id, w.today, notIn(rule.between(w.today, w.horizonEnd), endDate));
  }
  visits.updated = (await rewriteVisits(ctx, id, w.today, w.timezone, input.checklist !== undefined)).size;
  if (updated.status === 'active') visits.added = await fillHorizon(ctx, updated, w);
  return changeOf(ctx, updated, w, visits);
}

function move(r: ScheduleRow, trigger: ScheduleTrigger): ScheduleStatus {
  const to = next(scheduleMachine, r.status as ScheduleStatus, trigger);
  if (to === undefined) throw invalidState(`${withArticle(`${r.status} schedule`, true)} cannot ${trigger}`);
  return to;
}

export async function pauseSchedule(ctx: Ctx, id: string) {
  const w = await scheduleContext(ctx);
  const r = await lockSchedule(ctx, id);
  const status = move(r, 'pause');
  const updated = await saveSchedule(ctx, id, { status });
  const removed = await removeVisits(ctx, id, w.today, sql`TRUE`);
  return changeOf(ctx, updated, w, { updated: 0, added: 0, removed });
}

export async function resumeSchedule(ctx: Ctx, id: string) {
  const w = await scheduleContext(ctx);
  const r = await lockSchedule(ctx, id);
  const status = move(r, 'resume');
  if (r.contractId !== null) {
    const [c] = await ctx.tx
      .select({ status: contracts.status })
      .from(contracts)
      .where(and(eq(contracts.organizationId, ctx.organizationId), eq(contracts.id, r.contractId)));
    if (c && c.status !== 'active') {
      throw invalidState(
        `The schedule follows contract ${r.contractId}, which is ${c.status}: it resumes when the contract is active`,
      );
    }
  }
  const updated = await saveSchedule(ctx, id, { status });
  const added = await fillHorizon(ctx, updated, w);
  return changeOf(ctx, updated, w, { updated: 0, added, removed: 0 });
}

export async function endSchedule(ctx: Ctx, id: string, body: { endDate?: string | undefined } | null) {
  const w = await scheduleContext(ctx);
  const input = await withCalendarDates(body ?? {}, ['endDate'], async () => w.timezone);
  const r = await lockSchedule(ctx, id);
  const status = move(r, 'end');
  // Before startDate is allowed: a schedule whose first visit is still ahead ends with none.
  const endDate = input.endDate ?? w.today;
  const updated = await saveSchedule(ctx, id, { status, endDate });
  const removed = await removeVisits(ctx, id, w.today, sql`j.scheduled_date > ${endDate}::date`);
  return changeOf(ctx, updated, w, { updated: 0, added: 0, removed });
}

/**
 * Skips one occurrence: its visit is canceled (or, not made yet, it never will be).
 * The skip is recorded either way, so no later pass makes that date again.
 */
export async function skipOccurrence(ctx: Ctx, id: string, body: { date: string }) {
  const w = await scheduleContext(ctx);
  const { date } = await withCalendarDates(body, ['date'], async () => w.timezone);
  const r = await lockSchedule(ctx, id);
  if (!ruleOf(r).includes(date)) throw invalidField('date', `${date} is not an occurrence of this schedule`);
  const [visit] = await ctx.tx
    .select()
    .from(jobs)
    .where(and(eq(jobs.organizationId, ctx.organizationId), eq(jobs.scheduleId, id), eq(jobs.occurrenceDate, date)))
    .for('update');
  if (visit && visit.status !== 'canceled' && !canTake(jobMachine, visit.status as JobStatus, 'cancel')) {
    throw invalidState(`The visit of ${date} is ${visit.status} and cannot be skipped`);
  }
  await ctx.tx
    .insert(jobScheduleSkips)
    .values({ organizationId: ctx.organizationId, scheduleId: id, occurrenceDate: date, reason: 'skipped' })
    .onConflictDoNothing();
  if (!visit) return { date, skipped: true as const };
  if (visit.status !== 'canceled') {
    const from = visit.status as JobStatus;
    const to = take(jobMachine, from, 'cancel');
    const [row] = await ctx.tx
      .update(jobs)
      .set({ status: to, updatedAt: new Date() })
      .where(and(eq(jobs.organizationId, ctx.organizationId), eq(jobs.id, visit.id)))
      .returning();
    await ctx.tx.execute(sql`
      INSERT INTO job_activity (id, organization_id, job_id, type, message, actor_id, created_at)
      VALUES (${newId('jac')}, ${ctx.organizationId}, ${visit.id}, 'status_changed', ${`Skipped: occurrence ${date} of schedule ${id}`},
              ${ctx.actor.kind === 'portal' || ctx.actor.kind === 'system' ? null : ctx.actor.id}, ${stamp().toISOString()}::timestamptz)`);
    await emitTransition(ctx, row as typeof jobs.$inferSelect, from, to);
  }
  return getJob(ctx, visit.id);
}

/*
 * A contract's schedule follows the contract (operations.md §9). The contracts module
 * calls these in the transaction that moves the contract, so both commit together.
 */

async function scheduleOfContract(ctx: Ctx, contractId: string): Promise<ScheduleRow | undefined> {
  const [row] = await ctx.tx
    .select()
    .from(jobSchedules)
    .where(and(eq(jobSchedules.organizationId, ctx.organizationId), eq(jobSchedules.contractId, contractId)))
    .for('update');
  return row;
}

/** The contract became active: its paused schedule resumes and makes its visits. */
export async function followContractActivation(ctx: Ctx, contractId: string, now: Date = new Date()) {
  const r = await scheduleOfContract(ctx, contractId);
  if (!r || !canTake(scheduleMachine, r.status as ScheduleStatus, 'resume')) return;
  const w = await scheduleContext(ctx, now);
  const updated = await saveSchedule(ctx, r.id, {
    status: take(scheduleMachine, r.status as ScheduleStatus, 'resume'),
  });
  await fillHorizon(ctx, updated, w);
}

/**
 * The contract expired or was canceled: its schedule ends, and its visits not
 * started from today on are canceled (the term is over, or called off).
 */
export async function followContractEnd(ctx: Ctx, contractId: string, now: Date = new Date()) {
  const r = await scheduleOfContract(ctx, contractId);
  if (!r || !canTake(scheduleMachine, r.status as ScheduleStatus, 'end')) return;
  const w = await scheduleContext(ctx, now);
  const yesterday = addDays(w.today, -1);
  const last = [yesterday, r.startDate].sort()[1] as string;
  const endDate = r.endDate !== null && r.endDate < last ? r.endDate : last;
  await saveSchedule(ctx, r.id, { status: take(scheduleMachine, r.status as ScheduleStatus, 'end'), endDate });
  await removeVisits(ctx, r.id, w.today, sql`TRUE`);
}
