import { and, eq, isNull } from 'drizzle-orm';
import { sqlStateOf } from '../../db/pg-errors.js';
import { timeEntries } from '../../db/schema/index.js';
import { AppError, invalidField, invalidState } from '../../platform/errors.js';
import { emit } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import type { Ctx } from '../../platform/tenancy.js';
import { requireJob, targetMember } from './crew-tracking.refs.js';
import { instantOf } from './instants.js';
import type { ClockInInput, ClockOutInput } from './time-entries.schemas.js';
import { minutesBetween, type TimeEntryRow, timeEntryView } from './time-entries.view.js';

const alreadyIn = () => new AppError('CONFLICT', 'This member is already clocked in; clock out first');

/**
 * Opens an entry. "One open entry per member" is the partial unique index
 * time_entries_one_open_uq: the check below gives the usual answer, the index
 * decides a race between two phones clocking in at the same instant.
 */
export async function clockIn(ctx: Ctx, input: ClockInInput) {
  const startedAt = instantOf('at', input.at);
  const member = await targetMember(ctx, input.memberId);
  if (input.jobId !== undefined) await requireJob(ctx, input.jobId);
  const [open] = await ctx.tx
    .select({ id: timeEntries.id })
    .from(timeEntries)
    .where(
      and(
        eq(timeEntries.organizationId, ctx.organizationId),
        eq(timeEntries.memberId, member.id),
        isNull(timeEntries.endedAt),
      ),
    );
  if (open) throw alreadyIn();
  try {
    const [row] = await ctx.tx
      .insert(timeEntries)
      .values({
        id: newId('tme'),
        organizationId: ctx.organizationId,
        memberId: member.id,
        userId: member.userId,
        jobId: input.jobId ?? null,
        type: input.type ?? 'work',
        startedAt,
        startLocation: input.location ?? null,
      })
      .returning();
    return timeEntryView(row as TimeEntryRow);
  } catch (err) {
    if (sqlStateOf(err) === '23505') throw alreadyIn();
    throw err;
  }
}

/** Closes the member's open entry; a work entry emits time_entry.completed in this transaction. */
export async function clockOut(ctx: Ctx, input: ClockOutInput) {
  const endedAt = instantOf('at', input.at);
  const member = await targetMember(ctx, input.memberId);
  const [open] = await ctx.tx
    .select()
    .from(timeEntries)
    .where(
      and(
        eq(timeEntries.organizationId, ctx.organizationId),
        eq(timeEntries.memberId, member.id),
        isNull(timeEntries.endedAt),
      ),
    )
    .for('update');
  if (!open) throw invalidState('This member is not clocked in');
  if (endedAt.getTime() < open.startedAt.getTime()) {
    throw invalidField('at', `is before the clock-in at ${open.startedAt.toISOString()}`);
  }
  if (input.mileage !== undefined && open.type !== 'drive') {
    throw invalidField('mileage', 'is only recorded on drive entries');
  }
  const [row] = await ctx.tx
    .update(timeEntries)
    .set({
      endedAt,
      endLocation: input.location ?? null,
      ...(input.mileage !== undefined ? { mileage: input.mileage } : {}),
      updatedAt: new Date(),
    })
    .where(and(eq(timeEntries.organizationId, ctx.organizationId), eq(timeEntries.id, open.id)))
    .returning();
  const entry = timeEntryView(row as TimeEntryRow);
  // Drive entries are mileage logs: the spec excludes them from time_entry.completed.
  if (entry.type === 'work') {
    await emit(ctx, 'time_entry.completed', {
      timeEntryId: entry.id,
      memberId: entry.memberId,
      userId: entry.userId,
      jobId: entry.jobId,
      startedAt: open.startedAt.toISOString(),
      endedAt: endedAt.toISOString(),
      durationMinutes: minutesBetween(open.startedAt, endedAt),
      timeEntry: { ...entry, startedAt: open.startedAt.toISOString(), endedAt: endedAt.toISOString() },
    });
  }
  return entry;
}
