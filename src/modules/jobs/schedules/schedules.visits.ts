import { randomUUID } from 'node:crypto';
import { and, eq, getTableColumns, inArray, type SQL, sql } from 'drizzle-orm';
import { rowsOf } from '../../../db/client.js';
import { jobs } from '../../../db/schema/index.js';
import { chunked, literal, rowsAsArrays, rowsSource, valuesList } from '../../../db/values.js';
import { emitMany } from '../../../platform/events/outbox.js';
import { newId } from '../../../platform/ids.js';
import { take } from '../../../platform/state-machine.js';
import type { Ctx } from '../../../platform/tenancy.js';
import { jobView } from '../jobs.service.js';
import { jobMachine } from '../jobs.states.js';
import { startsAtSql } from '../jobs.times.js';

/*
 * A schedule's visits, written set-based: one statement makes, rewrites or removes
 * the visits of any number of schedules, whatever their count. Visits are jobs, so
 * they carry the jobs' activity rows and emit job.* events like any job.
 */

/** A visit is made `scheduled`, as a published job is. */
const SCHEDULED = take(jobMachine, 'draft', 'publish');
const CANCELED = take(jobMachine, SCHEDULED, 'cancel');

const actorOf = (ctx: Ctx) => (ctx.actor.kind === 'user' || ctx.actor.kind === 'apiKey' ? ctx.actor.id : null);

/**
 * The activity row of each visit a statement wrote: `source` is the statement's CTE
 * returning the visits' `id`; `message` may read its columns. `id` defaults to a random one.
 */
function activityOf(
  ctx: Ctx,
  source: 'ins' | 'upd' | 'gone',
  type: string,
  message: SQL,
  now: string,
  id: SQL = sql`'jac_' || replace(gen_random_uuid()::text, '-', '')`,
): SQL {
  return sql`INSERT INTO job_activity (id, organization_id, job_id, type, message, actor_id, created_at)
    SELECT ${id}, ${ctx.organizationId}, ${sql.raw(source)}.id, ${type}, ${message}, ${actorOf(ctx)}, ${now}::timestamptz
    FROM ${sql.raw(source)}`;
}

type JobRow = typeof jobs.$inferSelect;
const JOB_COLUMNS = Object.entries(getTableColumns(jobs));
const byDate = (a: JobRow, b: JobRow) => a.scheduledDate.localeCompare(b.scheduledDate) || a.id.localeCompare(b.id);

/**
 * A `RETURNING *` row of jobs as Drizzle's select gives it (each column's own mapping
 * from the driver's value): the visits just made carry their events without being read again.
 */
function jobRowOf(raw: Record<string, unknown>): JobRow {
  return Object.fromEntries(
    JOB_COLUMNS.map(([key, column]) => {
      const value = raw[column.name];
      return [key, value === null || value === undefined ? null : column.mapFromDriverValue(value)];
    }),
  ) as JobRow;
}

/** The visits a statement wrote, read back as jobs rows (by date) for their events. */
async function visitRows(ctx: Ctx, written: Array<{ id: string }>) {
  const rows = await ctx.tx
    .select()
    .from(jobs)
    .where(
      and(
        eq(jobs.organizationId, ctx.organizationId),
        inArray(
          jobs.id,
          written.map((r) => r.id),
        ),
      ),
    );
  return rows.sort(byDate);
}

/**
 * THE copy of a schedule onto its visits: each jobs column a visit takes from its
 * schedule `s`, for a visit on `date`. Making a visit and rewriting one both use
 * this list, so what a visit inherits is decided here only (priced lines go here too).
 */
export function visitFieldsFromSchedule(date: SQL, timezone: string): Array<[column: string, value: SQL]> {
  return [
    ['customer_id', sql`s.customer_id`],
    ['property_id', sql`s.property_id`],
    ['assigned_to', sql`s.assigned_to`],
    ['services', sql`ARRAY[s.title]`],
    ['notes', sql`s.notes`],
    ['start_time', sql`s.start_time`],
    ['starts_at', startsAtSql(date, sql`s.start_time`, timezone)],
    ['duration_minutes', sql`s.duration_minutes`],
    ['crew_id', sql`s.crew_id`],
    // The schedule's priced lines and their total, computed once per schedule by `schedulesFor`.
    ['line_items', sql`s.visit_line_items`],
    ['total_cents', sql`s.visit_total_cents`],
  ];
}

/**
 * The schedules `where` selects (over `s`), as the copy above reads them: with the
 * lines a visit takes (quantity kept as the exact decimal text, as job lines store it)
 * and their total worked out once per schedule, not once per visit.
 */
export function schedulesFor(organizationId: string, where: SQL): SQL {
  return sql`(SELECT s.*,
      COALESCE((SELECT jsonb_agg(jsonb_set(l.v, '{quantity}', to_jsonb(l.v->>'quantity')) ORDER BY l.n)
        FROM jsonb_array_elements(s.line_items) WITH ORDINALITY AS l(v, n)), '[]'::jsonb) AS visit_line_items,
      (SELECT COALESCE(SUM((l->>'amountCents')::bigint), 0) FROM jsonb_array_elements(s.line_items) l) AS visit_total_cents
    FROM job_schedules s WHERE s.organization_id = ${organizationId} AND ${where})`;
}

/**
 * The visits a schedule change may touch (operations.md §9): still scheduled, dated
 * from `today` on, made for an occurrence, not invoiced, and never edited one by one. Started,
 * completed, canceled, past and hand-edited visits never change.
 */
export function editableVisit(today: string): SQL {
  return sql`j.status = ${SCHEDULED} AND j.scheduled_date >= ${today}::date
    AND j.occurrence_date IS NOT NULL AND j.hand_edited_at IS NULL AND j.invoice_id IS NULL`;
}

export interface VisitPlan {
  scheduleId: string;
  dates: string[];
}

/**
 * Makes the planned visits that do not exist yet, in one statement: the unique
 * (schedule_id, occurrence_date) index makes each at most once, also when several
 * processes run this at the same time (ON CONFLICT DO NOTHING), and an occurrence
 * that was skipped or whose visit was deleted (job_schedule_skips) is left out.
 * Returns how many were made; emits job.created for each.
 */
export async function makeVisits(ctx: Ctx, plans: VisitPlan[], timezone: string): Promise<number> {
  const occurrences: unknown[][] = [];
  for (const p of plans) for (const d of p.dates) occurrences.push([p.scheduleId, d, newId('job')]);
  if (occurrences.length === 0) return 0;
  let made = 0;
  // The occurrences as rows of src/db/values.ts (a VALUES list on Citus, arrays elsewhere), in
  // chunks below the parameter limit.
  for (const chunk of chunked(occurrences, 3, 16)) made += await makeVisitsOf(ctx, chunk, timezone);
  return made;
}

async function makeVisitsOf(ctx: Ctx, occurrences: unknown[][], timezone: string): Promise<number> {
  if (!rowsAsArrays()) return makeVisitsRouted(ctx, occurrences, timezone);
  const scheduleIds = [...new Set(occurrences.map((o) => o[0] as string))];
  const now = new Date().toISOString();
  const copy = visitFieldsFromSchedule(sql`o.d`, timezone);
  const columns = sql.raw(copy.map(([c]) => c).join(', '));
  const values = sql.join(
    copy.map(([, v]) => v),
    sql`, `,
  );
  const made = rowsOf<Record<string, unknown>>(
    await ctx.tx.execute(sql`
      -- Plain literals, cast once here: a cast written in every row is parsed row by row.
      WITH v(schedule_id, d, id) AS (${rowsSource(occurrences, ['text', 'text', 'text'])}),
      o AS (SELECT v.schedule_id, v.d::date AS d, v.id FROM v),
      ins AS (
        INSERT INTO jobs (id, organization_id, status, scheduled_date, schedule_id, occurrence_date,
                          created_at, updated_at, ${columns})
        SELECT o.id, s.organization_id, ${SCHEDULED}, o.d, s.id, o.d, ${now}::timestamptz, ${now}::timestamptz, ${values}
        FROM o JOIN ${schedulesFor(ctx.organizationId, sql`s.id = ANY(${sql.param(scheduleIds)}::text[])`)} s
          ON s.id = o.schedule_id
        WHERE NOT EXISTS (
          SELECT 1 FROM job_schedule_skips k
          WHERE k.organization_id = s.organization_id AND k.schedule_id = o.schedule_id AND k.occurrence_date = o.d)
        ON CONFLICT (organization_id, schedule_id, occurrence_date) DO NOTHING
        RETURNING *
      ),
      checklist AS (
        INSERT INTO job_checklist_items (id, organization_id, job_id, position, text)
        SELECT 'jci_' || substr(ins.id, 5) || lpad(c.n::text, 3, '0'), ${ctx.organizationId}, ins.id, c.n - 1, c.item
        FROM ins JOIN job_schedules s ON s.id = ins.schedule_id
        CROSS JOIN LATERAL unnest(s.checklist) WITH ORDINALITY AS c(item, n)
      ),
      activity AS (${activityOf(
        ctx,
        'ins',
        'created',
        sql`'Visit scheduled for ' || ins.scheduled_date || ' by schedule ' || ins.schedule_id`,
        now,
        sql`'jac_' || substr(ins.id, 5)`,
      )})
      SELECT * FROM ins`),
  );
  return emitCreated(ctx, made);
}

/** job.created for each visit just made (its `RETURNING *` row), by date. */
async function emitCreated(ctx: Ctx, made: Array<Record<string, unknown>>): Promise<number> {
  if (made.length === 0) return 0;
  const rows = made.map(jobRowOf).sort(byDate);
  await emitMany(
    ctx,
    'job.created',
    rows.map((r) => ({ jobId: r.id, job: jobView(r) })),
  );
  return made.length;
}

/*
 * The same writes in the form Citus routes to the organization's shard (the VALUES path of
 * src/db/values.ts: `rowsAsArrays()` is false on Citus). Citus plans an INSERT … SELECT that it
 * cannot push down (here: rows from a VALUES list or from another CTE's RETURNING) on the
 * coordinator and copies the rows into the shard, and that COPY is refused under row-level
 * security (500 "COPY FROM not supported with row-level security"). So the rows are read first
 * (a SELECT naming the organization, routed), then written by plain multi-row INSERT … VALUES
 * statements, and each statement that changes visits returns their ids for the activity rows,
 * which follow as VALUES. A few statements instead of one; PostgreSQL and PGlite keep the one.
 */

/** Activity rows of visits as one INSERT … VALUES per chunk. */
async function insertActivity(
  ctx: Ctx,
  rows: Array<{ id?: string; jobId: string; message: string }>,
  type: string,
  now: string,
): Promise<void> {
  const actor = actorOf(ctx);
  const values = rows.map((r) => [r.id ?? newId('jac'), ctx.organizationId, r.jobId, type, r.message, actor, now]);
  for (const chunk of chunked(values, 7)) {
    await ctx.tx.execute(
      sql`INSERT INTO job_activity (id, organization_id, job_id, type, message, actor_id, created_at) ${valuesList(chunk)}`,
    );
  }
}

/** Checklist rows (`jci_…` ids as the one-statement path makes them) as INSERT … VALUES per chunk. */
async function insertChecklists(ctx: Ctx, rows: Array<{ id: string; jobId: string; position: number; text: string }>) {
  const values = rows.map((r) => [r.id, ctx.organizationId, r.jobId, r.position, r.text]);
  for (const chunk of chunked(values, 5)) {
    await ctx.tx.execute(
      sql`INSERT INTO job_checklist_items (id, organization_id, job_id, position, text) ${valuesList(chunk)}`,
    );
  }
}

/** `makeVisitsOf` on Citus: the visits' fields read (one SELECT), then written as VALUES. */
async function makeVisitsRouted(ctx: Ctx, occurrences: unknown[][], timezone: string): Promise<number> {
  const scheduleIds = [...new Set(occurrences.map((o) => o[0] as string))];
  const now = new Date().toISOString();
  const copy = visitFieldsFromSchedule(sql`o.d`, timezone);
  // Each copied field as its text, which INSERT … VALUES reads back as the column's type.
  const fields = sql.join(
    copy.map(([column, value]) => sql`(${value})::text AS ${sql.identifier(column)}`),
    sql`, `,
  );
  const planned = rowsOf<
    Record<string, string | null> & { id: string; schedule_id: string; d: string; checklist: string[] }
  >(
    await ctx.tx.execute(sql`
      SELECT o.id, s.id AS schedule_id, o.d::text AS d, s.checklist, ${fields}
      FROM (SELECT v.schedule_id, v.d::date AS d, v.id FROM (${valuesList(occurrences)}) AS v(schedule_id, d, id)) o
      JOIN ${schedulesFor(ctx.organizationId, sql`s.id = ANY(${sql.param(scheduleIds)}::text[])`)} s ON s.id = o.schedule_id
      WHERE NOT EXISTS (
        SELECT 1 FROM job_schedule_skips k
        WHERE k.organization_id = s.organization_id AND k.schedule_id = o.schedule_id AND k.occurrence_date = o.d)`),
  );
  if (planned.length === 0) return 0;
  const names = [
    'id',
    'organization_id',
    'status',
    'scheduled_date',
    'schedule_id',
    'occurrence_date',
    'created_at',
    'updated_at',
  ];
  const columns = sql.raw([...names, ...copy.map(([c]) => c)].join(', '));
  const rows = planned.map((p) => [
    p.id,
    ctx.organizationId,
    SCHEDULED,
    p.d,
    p.schedule_id,
    p.d,
    now,
    now,
    ...copy.map(([c]) => p[c] ?? null),
  ]);
  const made: Array<Record<string, unknown>> = [];
  for (const chunk of chunked(rows, names.length + copy.length)) {
    made.push(
      ...rowsOf<Record<string, unknown>>(
        await ctx.tx.execute(sql`INSERT INTO jobs (${columns}) ${valuesList(chunk)}
          ON CONFLICT (organization_id, schedule_id, occurrence_date) DO NOTHING
          RETURNING *`),
      ),
    );
  }
  if (made.length === 0) return 0;
  const byId = new Map(planned.map((p) => [p.id, p]));
  const visits = made.map((m) => byId.get(m.id as string) as (typeof planned)[number]);
  await insertChecklists(
    ctx,
    visits.flatMap((v) =>
      v.checklist.map((text, i) => ({
        id: `jci_${v.id.slice(4)}${String(i + 1).padStart(3, '0')}`,
        jobId: v.id,
        position: i,
        text,
      })),
    ),
  );
  await insertActivity(
    ctx,
    visits.map((v) => ({
      id: `jac_${v.id.slice(4)}`,
      jobId: v.id,
      message: `Visit scheduled for ${v.d} by schedule ${v.schedule_id}`,
    })),
    'created',
    now,
  );
  return emitCreated(ctx, made);
}

/**
 * Rewrites the editable visits of `scheduleId` from its current fields (one
 * statement); a visit whose copied fields already match is not counted. With
 * `checklist`, their checklists are replaced too (unless an item was ticked).
 * Returns the ids of the visits that changed.
 */
export async function rewriteVisits(
  ctx: Ctx,
  scheduleId: string,
  today: string,
  timezone: string,
  checklist: boolean,
): Promise<Set<string>> {
  const copy = visitFieldsFromSchedule(sql`j.scheduled_date`, timezone);
  const columns = sql.raw(copy.map(([c]) => `j.${c}`).join(', '));
  const targets = sql.raw(copy.map(([c]) => c).join(', '));
  const values = sql.join(
    copy.map(([, v]) => v),
    sql`, `,
  );
  const now = new Date().toISOString();
  const changed = new Set<string>();
  const message = `Changed by its schedule ${scheduleId}`;
  const update = sql`UPDATE jobs j SET (${targets}, updated_at) = (SELECT ${values}, ${now}::timestamptz)
        FROM ${schedulesFor(ctx.organizationId, sql`s.id = ${scheduleId}`)} s
        WHERE j.organization_id = ${ctx.organizationId} AND j.schedule_id = s.id AND ${editableVisit(today)}
          AND ROW(${columns}) IS DISTINCT FROM ROW(${values})
        RETURNING j.id`;
  if (!rowsAsArrays()) {
    // Citus: the new fields read, then written from a VALUES list, then the activity rows as
    // VALUES (see makeVisitsRouted). Citus refuses the UPDATE above, whose starts_at is a CASE
    // over a STABLE cast of a column ("non-IMMUTABLE functions are not allowed in CASE").
    const updated = await rewriteFieldsRouted(ctx, scheduleId, today, timezone, now);
    await insertActivity(
      ctx,
      updated.map((r) => ({ jobId: r.id, message })),
      'updated',
      now,
    );
    for (const r of updated) changed.add(r.id);
    if (checklist) for (const id of await replaceChecklistsRouted(ctx, scheduleId, today)) changed.add(id);
    return changed;
  }
  const updated = rowsOf<{ id: string }>(
    await ctx.tx.execute(sql`
      WITH upd AS (${update}),
      activity AS (${activityOf(ctx, 'upd', 'updated', sql`${message}`, now)})
      SELECT id FROM upd`),
  );
  for (const r of updated) changed.add(r.id);
  if (checklist) {
    const replaced = rowsOf<{ id: string }>(
      await ctx.tx.execute(sql`
        WITH target AS (
          SELECT j.id FROM jobs j
          WHERE j.organization_id = ${ctx.organizationId} AND j.schedule_id = ${scheduleId} AND ${editableVisit(today)}
            AND NOT EXISTS (SELECT 1 FROM job_checklist_items c WHERE c.job_id = j.id AND c.completed)
            AND ARRAY(SELECT c.text FROM job_checklist_items c WHERE c.job_id = j.id ORDER BY c.position)
                IS DISTINCT FROM (SELECT s.checklist FROM job_schedules s WHERE s.id = ${scheduleId})
        ),
        removed AS (
          DELETE FROM job_checklist_items c USING target WHERE c.job_id = target.id
        ),
        added AS (
          INSERT INTO job_checklist_items (id, organization_id, job_id, position, text)
          SELECT 'jci_' || replace(gen_random_uuid()::text, '-', ''), ${ctx.organizationId}, target.id, c.n - 1, c.item
          FROM target CROSS JOIN LATERAL unnest((SELECT s.checklist FROM job_schedules s WHERE s.id = ${scheduleId}))
            WITH ORDINALITY AS c(item, n)
        )
        SELECT id FROM target`),
    );
    for (const r of replaced) changed.add(r.id);
  }
  return changed;
}

/** Each jobs column's SQL type by name (a VALUES list's text cast back to it). */
const JOB_TYPES = new Map(JOB_COLUMNS.map(([, column]) => [column.name, column.getSQLType()]));

/**
 * `rewriteVisits`' fields on Citus: the editable visits whose copied fields differ, read with
 * the new fields as text, then one UPDATE per chunk from their VALUES list, cast back to each
 * column's type (the visit still editable when written). Returns the ids written.
 */
async function rewriteFieldsRouted(
  ctx: Ctx,
  scheduleId: string,
  today: string,
  timezone: string,
  now: string,
): Promise<Array<{ id: string }>> {
  const copy = visitFieldsFromSchedule(sql`j.scheduled_date`, timezone);
  const names = copy.map(([c]) => c);
  const current = sql.raw(names.map((c) => `j.${c}`).join(', '));
  const values = copy.map(([, v]) => v);
  const planned = rowsOf<Record<string, string | null> & { id: string }>(
    await ctx.tx.execute(sql`
      SELECT j.id, ${sql.join(
        copy.map(([c, v]) => sql`(${v})::text AS ${sql.identifier(c)}`),
        sql`, `,
      )}
      FROM jobs j JOIN ${schedulesFor(ctx.organizationId, sql`s.id = ${scheduleId}`)} s ON s.id = j.schedule_id
      WHERE j.organization_id = ${ctx.organizationId} AND ${editableVisit(today)}
        AND ROW(${current}) IS DISTINCT FROM ROW(${sql.join(values, sql`, `)})`),
  );
  // Each cell a typed literal ('…'::timestamptz), a constant once parsed: Citus refuses a STABLE
  // cast applied to a column in an UPDATE ("STABLE functions used in UPDATE queries cannot be
  // called with column references"), which v.starts_at::timestamptz would be.
  const typed = (p: Record<string, string | null>, c: string) =>
    sql.raw(`${literal(p[c] ?? null)}::${JOB_TYPES.get(c)}`);
  const set = sql.raw(names.map((c) => `${c} = v.${c}`).join(', '));
  const written: Array<{ id: string }> = [];
  for (const chunk of chunked(planned, names.length + 1)) {
    written.push(
      ...rowsOf<{ id: string }>(
        await ctx.tx.execute(sql`
          UPDATE jobs j SET ${set}, updated_at = ${now}::timestamptz
          FROM (${valuesList(chunk.map((p) => [p.id, ...names.map((c) => typed(p, c))]))}) AS v(id, ${sql.raw(names.join(', '))})
          WHERE j.organization_id = ${ctx.organizationId} AND j.schedule_id = ${scheduleId} AND j.id = v.id
            AND ${editableVisit(today)}
          RETURNING j.id`),
      ),
    );
  }
  return written;
}

/**
 * `rewriteVisits`' checklists on Citus: the visits whose checklist differs (none ticked) read
 * with the schedule's, their items deleted, the new ones inserted as VALUES. Returns their ids.
 */
async function replaceChecklistsRouted(ctx: Ctx, scheduleId: string, today: string): Promise<string[]> {
  const targets = rowsOf<{ id: string; checklist: string[] }>(
    await ctx.tx.execute(sql`
      SELECT j.id, s.checklist FROM jobs j
      JOIN job_schedules s ON s.organization_id = j.organization_id AND s.id = j.schedule_id
      WHERE j.organization_id = ${ctx.organizationId} AND j.schedule_id = ${scheduleId} AND ${editableVisit(today)}
        AND NOT EXISTS (SELECT 1 FROM job_checklist_items c
          WHERE c.organization_id = j.organization_id AND c.job_id = j.id AND c.completed)
        AND ARRAY(SELECT c.text FROM job_checklist_items c
          WHERE c.organization_id = j.organization_id AND c.job_id = j.id ORDER BY c.position) IS DISTINCT FROM s.checklist`),
  );
  if (targets.length === 0) return [];
  const ids = targets.map((t) => t.id);
  await ctx.tx.execute(sql`DELETE FROM job_checklist_items
    WHERE organization_id = ${ctx.organizationId} AND job_id = ANY(${sql.param(ids)}::text[])`);
  await insertChecklists(
    ctx,
    targets.flatMap((t) =>
      t.checklist.map((text, i) => ({ id: `jci_${randomUUID().replaceAll('-', '')}`, jobId: t.id, position: i, text })),
    ),
  );
  return ids;
}

/**
 * Cancels the editable visits of `scheduleId` that `drop` selects (over `j`), in one
 * statement, emitting job.cancelled and job.status_changed for each. A removed
 * visit gives its occurrence back (occurrence_date NULL): resuming the schedule, or
 * an edit that brings the date back, makes it again. That is safe for edits because
 * every maker of visits plans from the schedule's current rule (a date an edit moved
 * away from is no occurrence any more, so the worker never makes it), while skips and
 * visits canceled by hand keep their occurrence (and skips their job_schedule_skips
 * row), so they are never made again. Returns how many were removed.
 */
export async function removeVisits(ctx: Ctx, scheduleId: string, today: string, drop: SQL): Promise<number> {
  const now = new Date().toISOString();
  const message = `Canceled by its schedule ${scheduleId}`;
  const cancel = sql`UPDATE jobs j SET status = ${CANCELED}, occurrence_date = NULL, updated_at = ${now}::timestamptz
        WHERE j.organization_id = ${ctx.organizationId} AND j.schedule_id = ${scheduleId}
          AND ${editableVisit(today)} AND (${drop})
        RETURNING j.id`;
  let removed: Array<{ id: string }>;
  if (!rowsAsArrays()) {
    // Citus: the UPDATE alone, then its activity rows as VALUES (see makeVisitsRouted).
    removed = rowsOf<{ id: string }>(await ctx.tx.execute(cancel));
    await insertActivity(
      ctx,
      removed.map((r) => ({ jobId: r.id, message })),
      'status_changed',
      now,
    );
  } else {
    removed = rowsOf<{ id: string }>(
      await ctx.tx.execute(sql`
        WITH gone AS (${cancel}),
        activity AS (${activityOf(ctx, 'gone', 'status_changed', sql`${message}`, now)})
        SELECT id FROM gone`),
    );
  }
  if (removed.length === 0) return 0;
  const rows = await visitRows(ctx, removed);
  const data = rows.map((r) => ({
    jobId: r.id,
    job: jobView(r),
    oldStatus: SCHEDULED.toUpperCase(),
    newStatus: CANCELED.toUpperCase(),
  }));
  await emitMany(ctx, 'job.cancelled', data);
  await emitMany(ctx, 'job.status_changed', data);
  return rows.length;
}
