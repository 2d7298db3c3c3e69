import { and, asc, count, eq, gte, inArray, lte, type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { arrayRows } from '../../db/drizzle-adapter.js';
import { jobActivity, jobChecklistItems, jobScheduleSkips, jobs, type StoredJobLine } from '../../db/schema/index.js';
import { withCalendarDates } from '../../platform/calendar-date.js';
import { stamp } from '../../platform/dates.js';
import { listValues } from '../../platform/enum.js';
import { invalidField, invalidState, notFound } from '../../platform/errors.js';
import { emit } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import { fromCents } from '../../platform/money.js';
import { ownedRows } from '../../platform/owned-rows.js';
import { afterCursor, type ListOrder, orderOf, pageOfRows, rowExists } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import { canTake, finalStates, next, take, withArticle } from '../../platform/state-machine.js';
import type { Ctx } from '../../platform/tenancy.js';
import type { LineItemInputT } from '../billing/line-items.js';
import { requireCrew } from '../crew-tracking/crew-tracking.refs.js';
import { requireCustomer, requireProperty } from '../customers/customers.refs.js';
import { memberUsers } from '../members/members.refs.js';
import { releaseJob } from '../requests/requests.refs.js';
import { getOrgSettings, orgTimezone } from '../settings/settings.service.js';
import { calendarRange, type DateRange, resolveRange } from './jobs.dates.js';
import { jobLineView, type PricedJobLines, priceJobLines } from './jobs.lines.js';
import { JOB_TRIGGER_TO, type JobStatus, jobMachine, specificJobEvent } from './jobs.states.js';
import { startsAtSql } from './jobs.times.js';

type JobRow = typeof jobs.$inferSelect;

/** completed and canceled: only notes change, the checklist is frozen. */
const isFinal = (status: string) => finalStates(jobMachine).includes(status as JobStatus);

export function jobView(r: JobRow) {
  return {
    id: r.id,
    customerId: r.customerId,
    propertyId: r.propertyId,
    status: r.status as JobStatus,
    scheduledDate: r.scheduledDate,
    assignedTo: r.assignedTo,
    services: r.services,
    notes: r.notes,
    lineItems: r.lineItems.map(jobLineView),
    total: fromCents(r.totalCents),
    invoiceId: r.invoiceId,
    startTime: r.startTime,
    startsAt: r.startsAt,
    durationMinutes: r.durationMinutes,
    crewId: r.crewId,
    scheduleId: r.scheduleId,
    occurrenceDate: r.occurrenceDate,
    reminderSentAt: r.reminderSentAt,
    routeOrder: r.routeOrder,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}
export type JobView = ReturnType<typeof jobView>;

const actorId = (ctx: Ctx) => (ctx.actor.kind === 'portal' ? null : ctx.actor.id);

async function record(ctx: Ctx, jobId: string, type: string, message: string) {
  await ctx.tx.insert(jobActivity).values({
    id: newId('jac'),
    organizationId: ctx.organizationId,
    jobId,
    type,
    message,
    actorId: actorId(ctx),
    createdAt: stamp(),
  });
}

/** Every id must be a member (user id) of this organization, else 400 on `assignedTo`. */
export async function requireMembers(ctx: Ctx, ids: string[]) {
  if (ids.length === 0) return;
  const known = await memberUsers(ctx, ids);
  const missing = ids.find((id) => !known.has(id));
  if (missing) throw invalidField('assignedTo', `${missing} is not a member of this organization`);
}

const jobRows = ownedRows(jobs, 'Job');
/** The job, locked for the rest of the transaction so concurrent changes apply one after the other. */
export const lockJob = (ctx: Ctx, id: string): Promise<JobRow> => jobRows.find(ctx, id, true);

export async function emitTransition(ctx: Ctx, job: JobRow, from: JobStatus, to: JobStatus) {
  const data = { jobId: job.id, job: jobView(job), oldStatus: from.toUpperCase(), newStatus: to.toUpperCase() };
  const specific = specificJobEvent(to);
  if (specific) await emit(ctx, specific, data);
  await emit(ctx, 'job.status_changed', data);
}

export interface CreateJobInput {
  customerId: string;
  scheduledDate: string;
  propertyId?: string | undefined;
  services?: string[] | undefined;
  assignedTo?: string[] | undefined;
  notes?: string | undefined;
  checklist?: string[] | undefined;
  draft?: boolean | undefined;
  lineItems?: LineItemInputT[] | undefined;
  startTime?: string | undefined;
  durationMinutes?: number | undefined;
  crewId?: string | undefined;
}

export async function createJob(ctx: Ctx, body: CreateJobInput) {
  const input = await withCalendarDates(body, ['scheduledDate'], () => orgTimezone(ctx));
  await requireCustomer(ctx, input.customerId);
  const priced = await priceJobLines(ctx, input.lineItems ?? []);
  return insertJob(ctx, input, priced);
}

/**
 * A job whose lines are already priced (an approved estimate's, converted by the
 * estimates module): the same checks, row, checklist, activity and event as createJob.
 */
export async function createPricedJob(ctx: Ctx, input: Omit<CreateJobInput, 'lineItems'>, priced: PricedJobLines) {
  const dated = await withCalendarDates(input, ['scheduledDate'], () => orgTimezone(ctx));
  await requireCustomer(ctx, dated.customerId);
  return insertJob(ctx, dated, priced);
}

async function insertJob(ctx: Ctx, input: CreateJobInput, priced: PricedJobLines) {
  if (input.propertyId !== undefined) await requireProperty(ctx, input.customerId, input.propertyId);
  const assignedTo = input.assignedTo ?? [];
  await requireMembers(ctx, assignedTo);
  if (input.crewId !== undefined) await requireCrew(ctx, input.crewId);
  const startsAt = input.startTime ? startsAtSql(input.scheduledDate, input.startTime, await orgTimezone(ctx)) : null;

  // A job created without `draft` is a draft published at once.
  const status: JobStatus = input.draft ? 'draft' : take(jobMachine, 'draft', 'publish');
  const now = new Date();
  const [row] = await ctx.tx
    .insert(jobs)
    .values({
      id: newId('job'),
      organizationId: ctx.organizationId,
      customerId: input.customerId,
      propertyId: input.propertyId ?? null,
      status,
      scheduledDate: input.scheduledDate,
      assignedTo,
      services: (input.services ?? []).map((s) => s.trim()),
      notes: input.notes ?? null,
      lineItems: priced.lineItems,
      totalCents: priced.totalCents,
      startTime: input.startTime ?? null,
      startsAt,
      durationMinutes: input.durationMinutes ?? null,
      crewId: input.crewId ?? null,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  const job = row as JobRow;
  const checklist = input.checklist ?? [];
  if (checklist.length > 0) {
    await ctx.tx.insert(jobChecklistItems).values(
      checklist.map((text, position) => ({
        id: newId('jci'),
        organizationId: ctx.organizationId,
        jobId: job.id,
        position,
        text: text.trim(),
      })),
    );
  }
  await record(
    ctx,
    job.id,
    'created',
    status === 'draft' ? `Draft job created for ${job.scheduledDate}` : `Job scheduled for ${job.scheduledDate}`,
  );
  if (status === 'scheduled') await emit(ctx, 'job.created', { jobId: job.id, job: jobView(job) });
  return jobDetail(ctx, job);
}

async function jobDetail(ctx: Ctx, job: JobRow) {
  const checklist = await ctx.tx
    .select()
    .from(jobChecklistItems)
    .where(and(eq(jobChecklistItems.organizationId, ctx.organizationId), eq(jobChecklistItems.jobId, job.id)))
    .orderBy(asc(jobChecklistItems.position), asc(jobChecklistItems.id));
  const activity = await ctx.tx
    .select()
    .from(jobActivity)
    .where(and(eq(jobActivity.organizationId, ctx.organizationId), eq(jobActivity.jobId, job.id)))
    .orderBy(asc(jobActivity.createdAt), asc(jobActivity.id));
  return {
    ...jobView(job),
    checklist: checklist.map((c) => ({ id: c.id, text: c.text, completed: c.completed, completedAt: c.completedAt })),
    activity: activity.map((a) => ({
      id: a.id,
      type: a.type,
      description: a.message,
      message: a.message,
      actorId: a.actorId,
      createdAt: a.createdAt,
    })),
  };
}

export async function getJob(ctx: Ctx, id: string) {
  return jobDetail(ctx, await jobRows.find(ctx, id));
}

export interface JobFilters {
  /** One or more states, comma-separated (`scheduled,in_progress`). */
  status?: string | undefined;
  customerId?: string | undefined;
  assignedTo?: string | undefined;
  crewId?: string | undefined;
  scheduleId?: string | undefined;
}

function jobConditions(ctx: Ctx, f: JobFilters, range: DateRange): SQL[] {
  const where: SQL[] = [eq(jobs.organizationId, ctx.organizationId)];
  const statuses = listValues<JobStatus>(f.status);
  if (statuses)
    where.push(statuses.length === 1 ? eq(jobs.status, statuses[0] as JobStatus) : inArray(jobs.status, statuses));
  if (f.customerId) where.push(eq(jobs.customerId, f.customerId));
  if (f.crewId) where.push(eq(jobs.crewId, f.crewId));
  if (f.scheduleId) where.push(eq(jobs.scheduleId, f.scheduleId));
  // `@>` is what the GIN index on assigned_to answers.
  if (f.assignedTo) where.push(sql`${jobs.assignedTo} @> ARRAY[${f.assignedTo}]::text[]`);
  if (range.from) where.push(gte(jobs.scheduledDate, range.from));
  if (range.to) where.push(lte(jobs.scheduledDate, range.to));
  return where;
}

/** The page query of GET /api/jobs (exported so the scale test can EXPLAIN exactly this SQL). */
export function jobPageQuery(ctx: Ctx, f: JobFilters, range: DateRange, page: Page) {
  const where = jobConditions(ctx, f, range);
  if (page.startingAfter !== undefined) {
    where.push(afterCursor(jobs, JOB_ORDER, jobs.organizationId, ctx.organizationId, page.startingAfter));
  }
  return ctx.tx
    .select()
    .from(jobs)
    .where(and(...where))
    .orderBy(...orderOf(JOB_ORDER))
    .limit(page.limit + 1)
    .offset(page.offset);
}

/** Jobs list in calendar order: scheduledDate, then createdAt, then id (operations.md §1). */
const JOB_ORDER: ListOrder = { columns: [jobs.scheduledDate, jobs.createdAt, jobs.id], direction: 'asc' };

/**
 * A timestamptz as the text `Date.toISOString()` writes (UTC, milliseconds truncated as the
 * drivers truncate microseconds), so the calendar's rows need no Date on their way to JSON.
 */
const isoText = (column: AnyPgColumn) => sql`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** Cents in a jsonb line as the view's amount: the double nearest to cents / 100, as fromCents. */
const lineMoney = (key: string) => sql.raw(`(l->>'${key}')::float8 / 100`);

/**
 * One job as the JSON text of the job view (jobView, the Job schema's keys in its order), built
 * by PostgreSQL: `row_to_json` of a one-row subquery whose column names are the view's keys,
 * writes each value as JSON (text escaped, arrays as arrays, nulls as null) with no spaces.
 * Instants as ISO text (isoText), dates as YYYY-MM-DD, money as float8 / 100 (the double
 * nearest to cents / 100, as fromCents), stored lines as jobLineView's keys. A scalar subquery
 * (not a derived table) so the statement's own ORDER BY, on the table's columns, orders the rows.
 */
const calendarJobJson = sql`(SELECT row_to_json(v) FROM (SELECT
  ${jobs.id} AS "id", ${jobs.customerId} AS "customerId", ${jobs.propertyId} AS "propertyId",
  ${jobs.status} AS "status", ${jobs.scheduledDate} AS "scheduledDate", ${jobs.assignedTo} AS "assignedTo",
  ${jobs.services} AS "services", ${jobs.notes} AS "notes",
  CASE WHEN ${jobs.lineItems} = '[]'::jsonb THEN '[]'::json ELSE (
    SELECT json_agg(json_build_object('serviceId', l->'serviceId', 'description', l->'description',
      'quantity', (l->>'quantity')::float8, 'unitPrice', ${lineMoney('unitPriceCents')},
      'taxable', l->'taxable', 'amount', ${lineMoney('amountCents')}) ORDER BY n)
    FROM jsonb_array_elements(${jobs.lineItems}) WITH ORDINALITY AS e(l, n)) END AS "lineItems",
  ${jobs.totalCents}::float8 / 100 AS "total", ${jobs.invoiceId} AS "invoiceId", ${jobs.startTime} AS "startTime",
  ${isoText(jobs.startsAt)} AS "startsAt", ${jobs.durationMinutes} AS "durationMinutes", ${jobs.crewId} AS "crewId",
  ${jobs.scheduleId} AS "scheduleId", ${jobs.occurrenceDate} AS "occurrenceDate",
  ${isoText(jobs.reminderSentAt)} AS "reminderSentAt", ${jobs.routeOrder} AS "routeOrder",
  ${isoText(jobs.createdAt)} AS "createdAt", ${isoText(jobs.updatedAt)} AS "updatedAt") v)::text`;

/** The calendar's query: each job's date and its view as JSON text (exported for the scale test's EXPLAIN). */
export function jobCalendarQuery(ctx: Ctx, f: JobFilters, range: { from: string; to: string }) {
  return ctx.tx
    .select({ date: sql<string>`${jobs.scheduledDate}::text`, json: calendarJobJson })
    .from(jobs)
    .where(and(...jobConditions(ctx, f, range)))
    .orderBy(asc(jobs.scheduledDate), asc(jobs.createdAt), asc(jobs.id));
}

/** The total behind X-Total-Count (exported for the scale test's EXPLAIN). */
export function jobCountQuery(ctx: Ctx, f: JobFilters, range: DateRange) {
  return ctx.tx
    .select({ n: count() })
    .from(jobs)
    .where(and(...jobConditions(ctx, f, range)));
}

export async function listJobs(
  ctx: Ctx,
  q: JobFilters & { startDate?: string; from?: string; endDate?: string; to?: string },
  page: Page,
) {
  const { timezone } = await getOrgSettings(ctx);
  const range = resolveRange(q, timezone);
  const fetched = await jobPageQuery(ctx, q, range, page);
  const { rows, hasMore } = await pageOfRows(fetched, page, () =>
    rowExists(ctx.tx, jobs, ctx.organizationId, page.startingAfter as string),
  );
  const total = page.includeTotal ? Number((await jobCountQuery(ctx, q, range))[0]?.n ?? 0) : undefined;
  return { rows: rows.map(jobView), hasMore, total };
}

/**
 * Jobs grouped by date, as the JSON text of the CalendarResponse's `data` (the days, each with
 * its jobs). Up to 92 days of a busy organization is thousands of jobs, and their reading,
 * building and serializing in Node cost several times the query (the jobs bench at 1,000,000
 * jobs: ~3,700 jobs took 75 ms of which the SQL 10). So PostgreSQL writes each job's JSON
 * (calendarJobJson), the driver hands back two text columns a row (arrayRows), and one pass
 * joins them into days; the route sends the text as it is, without the response serializer.
 * test/jobs/jobs.test.ts compares the calendar with the list (jobView) field by field, and the
 * contract check validates it against the Job schema, on both databases.
 */
export async function jobCalendar(ctx: Ctx, q: JobFilters & { startDate: string; endDate: string }): Promise<string> {
  const { timezone } = await getOrgSettings(ctx);
  const range = calendarRange(q.startDate, q.endDate, timezone);
  const query = jobCalendarQuery(ctx, q, range).toSQL();
  const rows = (await arrayRows(ctx.tx, query.sql, query.params)) as Array<[string, string]>;
  const days: string[] = [];
  let date: string | undefined;
  let jobsOfDay: string[] = [];
  for (const [day, json] of rows) {
    if (day !== date) {
      if (date !== undefined) days.push(`{"date":"${date}","jobs":[${jobsOfDay.join(',')}]}`);
      date = day;
      jobsOfDay = [];
    }
    jobsOfDay.push(json);
  }
  if (date !== undefined) days.push(`{"date":"${date}","jobs":[${jobsOfDay.join(',')}]}`);
  return `[${days.join(',')}]`;
}

export interface UpdateJobInput {
  status?: Exclude<JobStatus, 'draft'> | undefined;
  scheduledDate?: string | undefined;
  propertyId?: string | null | undefined;
  services?: string[] | undefined;
  assignedTo?: string[] | undefined;
  notes?: string | null | undefined;
  lineItems?: LineItemInputT[] | undefined;
  startTime?: string | null | undefined;
  durationMinutes?: number | null | undefined;
  crewId?: string | null | undefined;
}

const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
/** Field by field: jsonb hands keys back in its own order, so serialised forms cannot be compared. */
const sameLines = (a: StoredJobLine[], b: StoredJobLine[]) =>
  a.length === b.length &&
  a.every((x, i) => {
    const y = b[i] as StoredJobLine;
    return (
      x.serviceId === y.serviceId &&
      x.description === y.description &&
      Number(x.quantity) === Number(y.quantity) &&
      x.unitPriceCents === y.unitPriceCents &&
      x.taxable === y.taxable &&
      x.amountCents === y.amountCents
    );
  });

export async function updateJob(ctx: Ctx, id: string, body: UpdateJobInput) {
  const input = await withCalendarDates(body, ['scheduledDate'], () => orgTimezone(ctx));
  const job = await lockJob(ctx, id);
  const from = job.status as JobStatus;
  const given = Object.keys(input).filter((k) => input[k as keyof UpdateJobInput] !== undefined);

  // Validate everything before the first write: a refused request writes and emits nothing.
  if (isFinal(from)) {
    const blocked = given.filter((k) => k !== 'notes');
    if (blocked.length > 0)
      throw invalidState(`${withArticle(`${from} job`, true)} accepts only notes; ${blocked.join(', ')} cannot change`);
  }
  let to: JobStatus | undefined;
  if (input.status !== undefined) {
    if (canTake(jobMachine, from, 'publish')) {
      throw invalidState('A draft job changes status only by POST /api/jobs/{id}/publish');
    }
    to = next(jobMachine, from, JOB_TRIGGER_TO[input.status]);
    if (to === undefined) throw invalidState(`A job cannot move from ${from} to ${input.status}`);
  }
  if (input.propertyId) await requireProperty(ctx, job.customerId, input.propertyId);
  if (input.assignedTo) await requireMembers(ctx, input.assignedTo);
  const priced = input.lineItems ? await priceJobLines(ctx, input.lineItems) : undefined;
  if (input.crewId) await requireCrew(ctx, input.crewId);

  const patch: Partial<Omit<JobRow, 'startsAt'>> & { startsAt?: JobRow['startsAt'] | SQL } = {};
  const entries: Array<[string, string]> = [];
  if (input.scheduledDate !== undefined && input.scheduledDate !== job.scheduledDate) {
    patch.scheduledDate = input.scheduledDate;
    entries.push(['rescheduled', `Rescheduled from ${job.scheduledDate} to ${input.scheduledDate}`]);
  }
  if (input.assignedTo !== undefined && !sameList(input.assignedTo, job.assignedTo)) {
    patch.assignedTo = input.assignedTo;
    entries.push([
      'assigned',
      input.assignedTo.length === 0 ? 'Unassigned everyone' : `Assigned to ${input.assignedTo.join(', ')}`,
    ]);
  }
  if (input.notes !== undefined && input.notes !== job.notes) {
    patch.notes = input.notes;
    entries.push(['notes_updated', input.notes === null ? 'Notes cleared' : 'Notes updated']);
  }
  const services = input.services?.map((s) => s.trim());
  if (services !== undefined && !sameList(services, job.services)) {
    patch.services = services;
    entries.push(['updated', `Services set to ${services.length === 0 ? '(none)' : services.join(', ')}`]);
  }
  if (input.propertyId !== undefined && input.propertyId !== job.propertyId) {
    patch.propertyId = input.propertyId;
    entries.push(['updated', input.propertyId === null ? 'Property removed' : `Property set to ${input.propertyId}`]);
  }
  if (priced && !sameLines(priced.lineItems, job.lineItems)) {
    patch.lineItems = priced.lineItems;
    patch.totalCents = priced.totalCents;
    entries.push([
      'updated',
      `Lines set: ${priced.lineItems.length}, total ${fromCents(priced.totalCents).toFixed(2)}`,
    ]);
  }
  if (input.startTime !== undefined && input.startTime !== job.startTime) {
    patch.startTime = input.startTime;
    entries.push(['updated', input.startTime === null ? 'Start time removed' : `Start time set to ${input.startTime}`]);
  }
  if (input.durationMinutes !== undefined && input.durationMinutes !== job.durationMinutes) {
    patch.durationMinutes = input.durationMinutes;
    entries.push(['updated', `Duration set to ${input.durationMinutes ?? '(none)'}`]);
  }
  if (input.crewId !== undefined && input.crewId !== job.crewId) {
    patch.crewId = input.crewId;
    entries.push(['assigned', input.crewId === null ? 'Crew removed' : `Crew set to ${input.crewId}`]);
  }
  if (patch.scheduledDate !== undefined || patch.startTime !== undefined) {
    const startTime = patch.startTime === undefined ? job.startTime : patch.startTime;
    patch.startsAt = startsAtSql(patch.scheduledDate ?? job.scheduledDate, startTime, await orgTimezone(ctx));
  }
  // A visit changed by hand keeps its changes when its schedule is edited later (operations.md §9).
  if (job.scheduleId !== null && entries.some(([type]) => type !== 'status_changed')) {
    patch.handEditedAt = new Date();
  }
  if (to !== undefined) {
    patch.status = to;
    if (to === 'completed') patch.completedAt = new Date();
    entries.push(['status_changed', `Status changed from ${from} to ${to}`]);
  }
  if (entries.length === 0) return jobDetail(ctx, job);

  const [row] = await ctx.tx
    .update(jobs)
    .set({ ...patch, updatedAt: new Date() })
    .where(jobRows.mine(ctx, id))
    .returning();
  const updated = row as JobRow;
  for (const [type, message] of entries) await record(ctx, id, type, message);
  if (to !== undefined) await emitTransition(ctx, updated, from, to);
  return jobDetail(ctx, updated);
}

export async function publishJob(ctx: Ctx, id: string) {
  const job = await lockJob(ctx, id);
  const to = next(jobMachine, job.status as JobStatus, 'publish');
  if (to === undefined) throw invalidState(`Only a draft job can be published; this one is ${job.status}`);
  const [row] = await ctx.tx
    .update(jobs)
    .set({ status: to, updatedAt: new Date() })
    .where(jobRows.mine(ctx, id))
    .returning();
  const updated = row as JobRow;
  await record(ctx, id, 'published', `Published: scheduled for ${updated.scheduledDate}`);
  await emit(ctx, 'job.created', { jobId: id, job: jobView(updated) });
  return jobDetail(ctx, updated);
}

export async function deleteJob(ctx: Ctx, id: string) {
  const job = await lockJob(ctx, id);
  if (job.status === 'completed') {
    throw invalidState('A completed job is kept as a record; set status canceled instead of deleting');
  }
  // A deleted visit's occurrence is never made again: its tombstone outlives the row.
  if (job.scheduleId !== null && job.occurrenceDate !== null) {
    await ctx.tx
      .insert(jobScheduleSkips)
      .values({
        organizationId: ctx.organizationId,
        scheduleId: job.scheduleId,
        occurrenceDate: job.occurrenceDate,
        reason: 'deleted',
      })
      .onConflictDoNothing();
  }
  // A request converted to this job lets go of it first (its foreign key is NO ACTION).
  await releaseJob(ctx, id);
  await ctx.tx.delete(jobs).where(jobRows.mine(ctx, id));
}

export async function setChecklistItem(ctx: Ctx, id: string, itemId: string, completed: boolean) {
  const job = await lockJob(ctx, id);
  const [item] = await ctx.tx
    .select()
    .from(jobChecklistItems)
    .where(
      and(
        eq(jobChecklistItems.organizationId, ctx.organizationId),
        eq(jobChecklistItems.jobId, id),
        eq(jobChecklistItems.id, itemId),
      ),
    );
  if (!item) throw notFound('Checklist item');
  if (isFinal(job.status)) {
    throw invalidState(`The checklist of ${withArticle(`${job.status} job`)} cannot change`);
  }
  // Ticking a ticked item (or reopening an open one) changes nothing and records nothing.
  if (item.completed === completed) return jobDetail(ctx, job);
  await ctx.tx
    .update(jobChecklistItems)
    .set({ completed, completedAt: completed ? new Date() : null })
    .where(and(eq(jobChecklistItems.organizationId, ctx.organizationId), eq(jobChecklistItems.id, itemId)));
  await record(
    ctx,
    id,
    completed ? 'checklist_item_completed' : 'checklist_item_uncompleted',
    `${completed ? 'Completed' : 'Reopened'} checklist item "${item.text}"`,
  );
  const [row] = await ctx.tx.update(jobs).set({ updatedAt: new Date() }).where(jobRows.mine(ctx, id)).returning();
  return jobDetail(ctx, row as JobRow);
}
