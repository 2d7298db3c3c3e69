import type { timeEntries } from '../../db/schema/index.js';

export type TimeEntryRow = typeof timeEntries.$inferSelect;
type Point = { lat: number; lng: number };
export interface Edit {
  at: string;
  actorId: string;
  changes: Record<string, { from: unknown; to: unknown }>;
}

export const minutesBetween = (a: Date, b: Date) => Math.round((b.getTime() - a.getTime()) / 60_000);

export function timeEntryView(r: TimeEntryRow) {
  return {
    id: r.id,
    memberId: r.memberId,
    userId: r.userId,
    jobId: r.jobId,
    type: r.type as 'work' | 'drive',
    startedAt: r.startedAt,
    endedAt: r.endedAt,
    durationMinutes: r.endedAt ? minutesBetween(r.startedAt, r.endedAt) : null,
    mileage: r.mileage,
    startLocation: (r.startLocation as Point | null) ?? null,
    endLocation: (r.endLocation as Point | null) ?? null,
    edits: r.edits as Edit[],
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}
