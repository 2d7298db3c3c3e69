import { and, eq, sql } from 'drizzle-orm';
import { rowsOf } from '../../db/client.js';
import { jobSchedules, jobs } from '../../db/schema/index.js';
import { clearReferences } from '../../platform/owned-rows.js';
import type { Ctx } from '../../platform/tenancy.js';
import { JOB_STATUSES, type JobStatus } from './jobs.states.js';

export interface JobFigures {
  scheduledToday: number;
  inProgress: number;
  completed: number;
  byStatus: Record<JobStatus, number>;
}

/**
 * The dashboard's jobs (operations.md §7), SQL counts over indexes led by organization_id:
 * `scheduledToday` = jobs on today's date (drafts and canceled ones left out), `inProgress`
 * as of now, `completed` = jobs completed from `start` (inclusive) to `end` (exclusive),
 * `byStatus` = jobs scheduled from..to per status, every status present.
 */
export async function jobFigures(
  ctx: Ctx,
  range: { from: string; to: string; start: Date; end: Date },
  today: string,
): Promise<JobFigures> {
  const org = ctx.organizationId;
  const statuses = sql.join(
    JOB_STATUSES.map((s) => sql`${s}`),
    sql`, `,
  );
  const [counts] = rowsOf<{ today: number; in_progress: number; completed: number }>(
    await ctx.tx.execute(sql`SELECT
        (SELECT count(*) FROM jobs WHERE organization_id = ${org} AND status IN ('scheduled', 'in_progress', 'on_hold', 'completed')
          AND scheduled_date = ${today})::int AS today,
        (SELECT count(*) FROM jobs WHERE organization_id = ${org} AND status = 'in_progress')::int AS in_progress,
        (SELECT count(*) FROM jobs WHERE organization_id = ${org} AND completed_at IS NOT NULL
          AND completed_at >= ${range.start.toISOString()}::timestamptz AND completed_at < ${range.end.toISOString()}::timestamptz)::int AS completed`),
  );
  const grouped = rowsOf<{ status: string; n: number }>(
    await ctx.tx.execute(sql`SELECT status, count(*)::int AS n FROM jobs
      WHERE organization_id = ${org} AND status IN (${statuses}) AND scheduled_date BETWEEN ${range.from} AND ${range.to}
      GROUP BY status`),
  );
  const byStatus = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
  for (const g of grouped) if (Object.hasOwn(byStatus, g.status)) byStatus[g.status as JobStatus] = Number(g.n);
  return {
    scheduledToday: Number(counts?.today ?? 0),
    inProgress: Number(counts?.in_progress ?? 0),
    completed: Number(counts?.completed ?? 0),
    byStatus,
  };
}

/** Whether `id` is a job of this organization (a body reference: each caller words its own 400). */
export async function jobExists(ctx: Ctx, id: string): Promise<boolean> {
  const [row] = await ctx.tx
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(eq(jobs.organizationId, ctx.organizationId), eq(jobs.id, id)));
  return row !== undefined;
}

/*
 * What ON DELETE SET NULL did before drizzle/0038 (refused by Citus): a job or schedule outlives
 * the crew, property, invoice or contract it named, with a null reference. Called by the flows
 * that delete those rows (src/flows/delete-*.ts), before the delete, in its transaction.
 */
export async function forgetCrew(ctx: Ctx, crewId: string): Promise<void> {
  await clearReferences(ctx, jobs, jobs.crewId, [crewId]);
  await clearReferences(ctx, jobSchedules, jobSchedules.crewId, [crewId]);
}
export async function forgetProperty(ctx: Ctx, propertyId: string): Promise<void> {
  await clearReferences(ctx, jobs, jobs.propertyId, [propertyId]);
  await clearReferences(ctx, jobSchedules, jobSchedules.propertyId, [propertyId]);
}
export async function forgetInvoices(ctx: Ctx, invoiceIds: string[]): Promise<void> {
  await clearReferences(ctx, jobs, jobs.invoiceId, invoiceIds);
}
/** A customer's jobs, which its hard deletion takes with it (ON DELETE CASCADE). */
export async function jobIdsOfCustomer(ctx: Ctx, customerId: string): Promise<string[]> {
  const rows = await ctx.tx
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(eq(jobs.organizationId, ctx.organizationId), eq(jobs.customerId, customerId)));
  return rows.map((r) => r.id);
}
