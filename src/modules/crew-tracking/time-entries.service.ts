import { and, eq, gte, lt, type SQL } from 'drizzle-orm';
import { timeEntries } from '../../db/schema/index.js';
import { rangeBound } from '../../platform/dates.js';
import { invalidField, notFound } from '../../platform/errors.js';
import { ownedRows } from '../../platform/owned-rows.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import type { Ctx } from '../../platform/tenancy.js';
import { organizationTimezone } from '../organizations/organizations.refs.js';
import { requireJob } from './crew-tracking.refs.js';
import { instantOf } from './instants.js';
import type { TimeEntryFilters, UpdateTimeEntryInput } from './time-entries.schemas.js';
import { type Edit, type TimeEntryRow, timeEntryView } from './time-entries.view.js';

const { mine, find: load } = ownedRows(timeEntries, 'Time entry');

/** Newest first by startedAt (then id): the order a payroll review reads them in. */
export async function listTimeEntries(ctx: Ctx, f: TimeEntryFilters, page: Page) {
  const where: SQL[] = [eq(timeEntries.organizationId, ctx.organizationId)];
  if (f.memberId) where.push(eq(timeEntries.memberId, f.memberId));
  if (f.jobId) where.push(eq(timeEntries.jobId, f.jobId));
  if (f.type) where.push(eq(timeEntries.type, f.type));
  if (f.from || f.to) {
    const tz = await organizationTimezone(ctx);
    if (f.from) where.push(gte(timeEntries.startedAt, rangeBound('from', f.from, tz, 'from')));
    if (f.to) where.push(lt(timeEntries.startedAt, rangeBound('to', f.to, tz, 'to')));
  }
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, timeEntries, and(...where), page, {
    columns: [timeEntries.startedAt, timeEntries.id],
    direction: 'desc',
  });
  return { rows: rows.map(timeEntryView), ...more };
}

export async function getTimeEntry(ctx: Ctx, id: string) {
  return timeEntryView(await load(ctx, id));
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * An owner/admin correction. Only real changes are kept, each appended to `edits`
 * with who and when, so payroll can see what was corrected from what.
 */
export async function updateTimeEntry(ctx: Ctx, id: string, input: UpdateTimeEntryInput) {
  const row = await load(ctx, id, true);
  const next = {
    startedAt: input.startedAt !== undefined ? instantOf('startedAt', input.startedAt) : row.startedAt,
    endedAt: input.endedAt !== undefined ? instantOf('endedAt', input.endedAt) : row.endedAt,
    type: input.type ?? row.type,
    jobId: input.jobId !== undefined ? input.jobId : row.jobId,
    mileage: input.mileage !== undefined ? input.mileage : row.mileage,
  };
  if (next.endedAt && next.endedAt.getTime() < next.startedAt.getTime()) {
    throw invalidField(input.endedAt !== undefined ? 'endedAt' : 'startedAt', 'the end is before the start');
  }
  if (next.type !== 'drive' && next.mileage !== null) {
    throw invalidField('mileage', 'is only recorded on drive entries (send mileage: null to clear it)');
  }
  if (input.jobId && input.jobId !== row.jobId) await requireJob(ctx, input.jobId);

  const changes: Edit['changes'] = {};
  const note = (field: string, from: unknown, to: unknown) => {
    if (from !== to) changes[field] = { from, to };
  };
  note('startedAt', iso(row.startedAt), iso(next.startedAt));
  note('endedAt', iso(row.endedAt), iso(next.endedAt));
  note('type', row.type, next.type);
  note('jobId', row.jobId, next.jobId);
  note('mileage', row.mileage, next.mileage);
  if (Object.keys(changes).length === 0) return timeEntryView(row);

  const edit: Edit = { at: new Date().toISOString(), actorId: ctx.actor.id, changes };
  const [updated] = await ctx.tx
    .update(timeEntries)
    .set({ ...next, edits: [...(row.edits as Edit[]), edit], updatedAt: new Date() })
    .where(mine(ctx, id))
    .returning();
  return timeEntryView(updated as TimeEntryRow);
}

export async function deleteTimeEntry(ctx: Ctx, id: string) {
  const rows = await ctx.tx.delete(timeEntries).where(mine(ctx, id)).returning({ id: timeEntries.id });
  if (rows.length === 0) throw notFound('Time entry');
}
