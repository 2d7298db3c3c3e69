import { and, asc, eq, gte, lt, sql } from 'drizzle-orm';
import { affectedRowsOf } from '../../db/client.js';
import { crewLatestLocations, crewLocations } from '../../db/schema/index.js';
import { chunked, rowsSource } from '../../db/values.js';
import { rangeBound } from '../../platform/dates.js';
import { invalidField } from '../../platform/errors.js';
import type { Ctx } from '../../platform/tenancy.js';
import { organizationTimezone } from '../organizations/organizations.refs.js';
import { callerMember, requireMember } from './crew-tracking.refs.js';
import { FUTURE_TOLERANCE_MS } from './instants.js';
import type { PostLocationsInput } from './locations.schemas.js';

/** The SQL types of a stored point's columns, in postLocations' order. */
const POINT_TYPES = ['text', 'text', 'timestamptz', 'float8', 'float8', 'real'];

/**
 * Stores a batch for the caller's member in one multi-row INSERT (a retried batch
 * is skipped by the primary key), then moves the member's latest point forward
 * only if this batch holds a newer one. Any invalid point refuses the whole batch.
 *
 * The INSERT is one statement whose rows are a VALUES list on Citus and one array per column
 * elsewhere (src/db/values.ts), and it answers only its count of stored points: 500 points through
 * the query builder were 3,000 bind parameters and 500 returned rows mapped back to Dates, which
 * cost more than storing them (bench/parts/crew-tracking.ts).
 */
export async function postLocations(ctx: Ctx, input: PostLocationsInput) {
  const member = await callerMember(ctx);
  const limit = Date.now() + FUTURE_TOLERANCE_MS;
  const points = input.points.map((p, i) => {
    const recordedAt = new Date(p.recordedAt);
    if (Number.isNaN(recordedAt.getTime())) throw invalidField(`points/${i}/recordedAt`, 'must be a date-time');
    if (recordedAt.getTime() > limit) {
      throw invalidField(`points/${i}/recordedAt`, 'is more than 5 minutes in the future');
    }
    return { lat: p.lat, lng: p.lng, accuracy: p.accuracy ?? null, recordedAt };
  });
  // 6 values a point: 500 points are far below one statement's limit, so this is one chunk.
  let accepted = 0;
  for (const chunk of chunked(points, 6)) {
    const rows = chunk.map((p) => [
      ctx.organizationId,
      member.id,
      p.recordedAt.toISOString(),
      p.lat,
      p.lng,
      p.accuracy,
    ]);
    // The command's count of rows written leaves out the points skipped as already stored.
    const stored = await ctx.tx.execute(
      sql`INSERT INTO ${crewLocations} (organization_id, member_id, recorded_at, lat, lng, accuracy)
        ${rowsSource(rows, POINT_TYPES)} ON CONFLICT DO NOTHING`,
    );
    accepted += affectedRowsOf(stored);
  }
  const newest = points.reduce((a, b) => (b.recordedAt > a.recordedAt ? b : a));
  await ctx.tx
    .insert(crewLatestLocations)
    .values({ ...newest, organizationId: ctx.organizationId, memberId: member.id, userId: member.userId })
    .onConflictDoUpdate({
      target: [crewLatestLocations.organizationId, crewLatestLocations.memberId],
      set: {
        lat: sql`excluded.lat`,
        lng: sql`excluded.lng`,
        accuracy: sql`excluded.accuracy`,
        recordedAt: sql`excluded.recorded_at`,
      },
      setWhere: sql`excluded.recorded_at > ${crewLatestLocations.recordedAt}`,
    });
  return { accepted, duplicates: points.length - accepted };
}

/** The last point of each member: one read of the small `crew_latest_locations` table. */
export async function latestLocations(ctx: Ctx) {
  const rows = await ctx.tx
    .select()
    .from(crewLatestLocations)
    .where(eq(crewLatestLocations.organizationId, ctx.organizationId))
    .orderBy(asc(crewLatestLocations.memberId));
  return rows.map((r) => ({
    memberId: r.memberId,
    userId: r.userId,
    lat: r.lat,
    lng: r.lng,
    accuracy: r.accuracy,
    recordedAt: r.recordedAt,
  }));
}

/**
 * A member's trail, oldest first, a range scan of the primary key. At most `limit`
 * points; `more` tells the route to link the next range (from the last point on).
 */
export async function trail(ctx: Ctx, q: { memberId: string; from: string; to: string; limit?: number | undefined }) {
  const member = await requireMember(ctx, q.memberId);
  const tz = await organizationTimezone(ctx);
  const from = rangeBound('from', q.from, tz, 'from');
  const to = rangeBound('to', q.to, tz, 'to');
  if (from >= to) throw invalidField('from', 'must be before to');
  const limit = q.limit ?? 1000;
  const rows = await ctx.tx
    .select()
    .from(crewLocations)
    .where(
      and(
        eq(crewLocations.organizationId, ctx.organizationId),
        eq(crewLocations.memberId, member.id),
        gte(crewLocations.recordedAt, from),
        lt(crewLocations.recordedAt, to),
      ),
    )
    .orderBy(asc(crewLocations.recordedAt))
    .limit(limit + 1);
  const more = rows.length > limit;
  const points = (more ? rows.slice(0, limit) : rows).map((r) => ({
    memberId: r.memberId,
    userId: member.userId,
    lat: r.lat,
    lng: r.lng,
    accuracy: r.accuracy,
    recordedAt: r.recordedAt,
  }));
  return { points, more };
}
