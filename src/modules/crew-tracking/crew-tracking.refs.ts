import { and, eq, sql } from 'drizzle-orm';
import { rowsOf } from '../../db/client.js';
import { crews, jobs, timeEntries } from '../../db/schema/index.js';
import { AppError, invalidField } from '../../platform/errors.js';
import { clearReferences } from '../../platform/owned-rows.js';
import type { Ctx } from '../../platform/tenancy.js';
import { type MemberRef, memberOfUser, membersById } from '../members/members.refs.js';

/*
 * Members named in a request body: `memberId` is the member's id (`mem_…`, GET
 * /api/members). An id that is not a member of this organization is a 400 on the
 * field, like other body references (customers.refs.ts); a missing one in the URL is a 404.
 */

/** The member the caller acts as (a user session or a device); an API key is no member. */
export async function callerMember(ctx: Ctx, field = 'memberId'): Promise<MemberRef> {
  if (ctx.actor.kind !== 'user') throw invalidField(field, 'is required when the caller is not a member (API key)');
  const row = await memberOfUser(ctx, ctx.actor.id);
  if (!row) throw invalidField(field, 'the caller is not a member of this organization');
  return row;
}

export async function requireMember(ctx: Ctx, id: string, field = 'memberId'): Promise<MemberRef> {
  const row = (await membersById(ctx, [id])).get(id);
  if (!row) throw invalidField(field, `${id} is not a member of this organization`);
  return row;
}

export async function requireMembers(ctx: Ctx, ids: string[], field = 'memberIds'): Promise<Map<string, MemberRef>> {
  const byId = await membersById(ctx, ids);
  const missing = [...new Set(ids)].find((id) => !byId.has(id));
  if (missing) throw invalidField(field, `${missing} is not a member of this organization`);
  return byId;
}

/** The user id of each member still in the organization, for responses that carry `userId` beside `memberId`. */
export async function userIdsOf(ctx: Ctx, ids: Array<string | null>): Promise<Map<string, string>> {
  const found = await membersById(
    ctx,
    ids.filter((id): id is string => id !== null),
  );
  return new Map([...found.values()].map((m) => [m.id, m.userId]));
}

/**
 * The member a request is about: the caller by default; someone else only for
 * owner/admin (a member clocking in a colleague is refused, not ignored).
 */
export async function targetMember(ctx: Ctx, memberId: string | undefined): Promise<MemberRef> {
  const self = ctx.actor.kind === 'user' ? await callerMember(ctx).catch(() => undefined) : undefined;
  if (memberId === undefined || memberId === self?.id) return self ?? callerMember(ctx);
  if (ctx.actor.role !== 'owner' && ctx.actor.role !== 'admin') {
    throw new AppError('FORBIDDEN', 'Only an owner or admin can act for another member');
  }
  return requireMember(ctx, memberId);
}

/**
 * A time entry's job. Read here, not asked of the jobs module: jobs import crew tracking
 * (a job's crew), so the way round would tie the two modules into a pair.
 */
export async function requireJob(ctx: Ctx, id: string, field = 'jobId') {
  const [row] = await ctx.tx
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(eq(jobs.organizationId, ctx.organizationId), eq(jobs.id, id)));
  if (!row) throw invalidField(field, `no job ${id}`);
  return { id };
}

export async function requireCrew(ctx: Ctx, id: string, field = 'crewId') {
  const [row] = await ctx.tx
    .select({ id: crews.id })
    .from(crews)
    .where(and(eq(crews.organizationId, ctx.organizationId), eq(crews.id, id)));
  if (!row) throw invalidField(field, `no crew ${id}`);
  return row;
}

export const isAdmin = (ctx: Ctx) => ctx.actor.role === 'owner' || ctx.actor.role === 'admin';

/**
 * The dashboard's crew hours (operations.md §7): closed entries that started from `start`
 * (inclusive) to `end` (exclusive), work and drive, in hours to 2 decimals. One aggregate
 * over (organization_id, started_at).
 */
export async function crewHours(ctx: Ctx, start: Date, end: Date): Promise<{ workHours: number; driveHours: number }> {
  const [row] = rowsOf<{ work: string | number; drive: string | number }>(
    await ctx.tx.execute(sql`SELECT
        round(coalesce(sum(extract(epoch FROM ended_at - started_at)) FILTER (WHERE type = 'work'), 0) / 3600, 2)::text AS work,
        round(coalesce(sum(extract(epoch FROM ended_at - started_at)) FILTER (WHERE type = 'drive'), 0) / 3600, 2)::text AS drive
      FROM time_entries WHERE organization_id = ${ctx.organizationId} AND ended_at IS NOT NULL
        AND started_at >= ${start.toISOString()}::timestamptz AND started_at < ${end.toISOString()}::timestamptz`),
  );
  return { workHours: Number(row?.work ?? 0), driveHours: Number(row?.drive ?? 0) };
}

/* What ON DELETE SET NULL did before drizzle/0038 (Citus refuses it): the row outlives the one it named, with a null reference. Called by the flows that delete the named rows (src/flows/delete-*.ts), before the delete, in its transaction. */
export const forgetJobs = (ctx: Ctx, jobIds: string[]): Promise<void> =>
  clearReferences(ctx, timeEntries, timeEntries.jobId, jobIds);
