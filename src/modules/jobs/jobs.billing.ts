import { and, asc, eq, gte, inArray, isNull, lt, type SQL, sql } from 'drizzle-orm';
import { rowsOf } from '../../db/client.js';
import { jobActivity, jobs, type StoredJobLine } from '../../db/schema/index.js';
import { chunked, microsecondsAfter, valuesList } from '../../db/values.js';
import { stamp } from '../../platform/dates.js';
import { AppError, invalidField, invalidState } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { Ctx } from '../../platform/tenancy.js';

/*
 * What billing may do to jobs (operations.md §9, "Billing the work"): the jobs module
 * owns the jobs table, so invoicing reads and marks jobs only through these functions.
 * Every read that leads to a bill locks the rows FOR UPDATE in id order (two callers
 * wait for each other instead of deadlocking), and the mark is conditional on
 * `invoice_id IS NULL`: two concurrent bills of one job bill it once.
 */

export interface BillableJob {
  id: string;
  customerId: string;
  propertyId: string | null;
  scheduledDate: string;
  lineItems: StoredJobLine[];
  /** The schedule the visit came from (null for a one-off job). */
  scheduleId: string | null;
}

const billable = (r: typeof jobs.$inferSelect): BillableJob => ({
  id: r.id,
  customerId: r.customerId,
  propertyId: r.propertyId,
  scheduledDate: r.scheduledDate,
  lineItems: r.lineItems,
  scheduleId: r.scheduleId,
});

const conflict = (message: string) => new AppError('CONFLICT', message);

/**
 * The named jobs, locked, in request order; refused before anything is written:
 * unknown or another organization's ids → 400 on `jobIds` naming them, a billed job
 * → 409 CONFLICT, a job not completed or without lines → 409 INVALID_STATE naming it.
 */
export async function lockJobsToBill(ctx: Ctx, ids: string[]): Promise<BillableJob[]> {
  const rows = await ctx.tx
    .select()
    .from(jobs)
    .where(and(eq(jobs.organizationId, ctx.organizationId), inArray(jobs.id, ids)))
    .orderBy(asc(jobs.id))
    .for('update');
  const byId = new Map(rows.map((r) => [r.id, r]));
  const missing = ids.filter((id) => !byId.has(id));
  if (missing.length > 0) throw invalidField('jobIds', `no job ${missing.join(', ')}`);
  const ordered = ids.map((id) => byId.get(id) as typeof jobs.$inferSelect);
  for (const r of ordered) {
    if (r.invoiceId) throw conflict(`Job ${r.id} is already billed (invoice ${r.invoiceId})`);
  }
  for (const r of ordered) {
    if (r.status !== 'completed') throw invalidState(`Job ${r.id} is ${r.status}; only completed jobs are billed`);
    if (r.lineItems.length === 0) throw invalidState(`Job ${r.id} has no lines to bill; add lineItems first`);
  }
  return ordered.map(billable);
}

export interface UnbilledQuery {
  /** Completed at or after this instant (none: however long ago). */
  from?: Date | undefined;
  /** Completed before this instant. */
  to: Date;
  customerIds?: string[] | undefined;
  /** A further condition on the jobs (e.g. a schedule's visits), from the jobs module's own columns. */
  where?: SQL | undefined;
}

/**
 * Completed, not yet billed jobs with lines, completed in [from, to), locked. A job a
 * concurrent bill holds is waited for and then dropped (its invoice_id is set once the
 * other commits: PostgreSQL re-checks the condition on the row it waited for).
 */
export async function lockUnbilledJobs(ctx: Ctx, q: UnbilledQuery): Promise<BillableJob[]> {
  const where = [
    eq(jobs.organizationId, ctx.organizationId),
    eq(jobs.status, 'completed'),
    isNull(jobs.invoiceId),
    lt(jobs.completedAt, q.to),
    sql`jsonb_array_length(${jobs.lineItems}) > 0`,
  ];
  if (q.from) where.push(gte(jobs.completedAt, q.from));
  if (q.customerIds) where.push(inArray(jobs.customerId, q.customerIds));
  if (q.where) where.push(q.where);
  const rows = await ctx.tx
    .select()
    .from(jobs)
    .where(and(...where))
    .orderBy(asc(jobs.id))
    .for('update');
  return rows.map(billable);
}

/**
 * Records that each invoice bills its jobs, which the caller locked and checked with
 * lockJobsToBill or lockUnbilledJobs. Conditional on the jobs still being unbilled, so
 * a bill that lost a race fails (409) and rolls back instead of billing a job twice.
 * (Not on `status` too: with both conditions the planner may walk the partial index of
 * unbilled jobs, every unbilled job of the organization per call, instead of the key.)
 */
export async function markJobsBilled(
  ctx: Ctx,
  bills: Array<{ jobIds: string[]; invoice: { id: string; invoiceNumber: string } }>,
): Promise<void> {
  const pairs = bills.flatMap((b) => b.jobIds.map((jobId) => ({ jobId, invoice: b.invoice })));
  if (pairs.length === 0) return;
  // The activity clock every other entry uses (stamp(): never behind the last one this process
  // wrote), so "invoiced" sorts after the completion written a moment before in the same ms.
  const at = stamp();
  const now = at.toISOString();
  const jobIds = sql.param(pairs.map((p) => p.jobId));
  // One statement for all the marks, whatever the number of jobs: the values travel as arrays.
  const marked = rowsOf<{ id: string }>(
    await ctx.tx.execute(sql`UPDATE ${jobs} SET invoice_id = v.invoice_id, updated_at = ${now}::timestamptz
      FROM unnest(${jobIds}::text[], ${sql.param(pairs.map((p) => p.invoice.id))}::text[]) AS v(job_id, invoice_id)
      WHERE ${jobs.organizationId} = ${ctx.organizationId} AND ${jobs.id} = v.job_id AND ${jobs.invoiceId} IS NULL
      RETURNING ${jobs.id}`),
  );
  if (marked.length !== pairs.length) {
    throw conflict('A job was billed by another request meanwhile; nothing was billed');
  }
  const actorId = ctx.actor.kind === 'portal' ? null : ctx.actor.id;
  // The activity entries as multi-row VALUES (src/db/values.ts: Citus routes them to the
  // organization's shard; an INSERT … SELECT from array parameters it refuses under row-level security).
  const entries = pairs.map((p, n) => [
    newId('jac'),
    ctx.organizationId,
    p.jobId,
    'invoiced',
    `Billed on invoice ${p.invoice.invoiceNumber}`,
    actorId,
    microsecondsAfter(at, n),
  ]);
  for (const chunk of chunked(entries, 7)) {
    await ctx.tx.execute(
      sql`INSERT INTO ${jobActivity} (id, organization_id, job_id, type, message, actor_id, created_at) ${valuesList(chunk)}`,
    );
  }
}
