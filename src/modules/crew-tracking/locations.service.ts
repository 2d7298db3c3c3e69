import { and, asc, eq, gte, lt, sql } from 'drizzle-orm';
import { affectedRowsOf } from '../../db/client.js';
import { crewLatestLocations, crewLocations } from '../../db/schema/index.js';
import { chunked, rowsAsArrays, rowsSource } from '../../db/values.js';
import { rangeBound } from '../../platform/dates.js';
import { invalidField } from '../../platform/errors.js';
import type { Ctx } from '../../platform/tenancy.js';
import type { MemberRef } from '../members/members.refs.js';
import { organizationTimezone } from '../organizations/organizations.refs.js';
import { callerMember, requireMember } from './crew-tracking.refs.js';
import { FUTURE_TOLERANCE_MS } from './instants.js';
import type { PostLocationsInput } from './locations.schemas.js';

/** The SQL types of a stored point's columns, in postLocations' order (the VALUES path). */
const POINT_TYPES = ['text', 'text', 'timestamptz', 'float8', 'float8', 'real'];

/**
 * Stores a batch for the caller's member (a retried batch is skipped by the primary key), and
 * moves the member's latest point forward only if this batch holds a newer one. Any invalid point
 * refuses the whole batch. It answers only its count of stored points, from the command tag: 500
 * returned rows mapped back to Dates cost more than storing them (bench/parts/crew-tracking.ts).
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
  const newest = points.reduce((a, b) => (b.recordedAt > a.recordedAt ? b : a));
  const accepted = rowsAsArrays()
    ? await storeAsArrays(ctx, member, points, newest)
    : await storeAsValues(ctx, member, points, newest);
  return { accepted, duplicates: points.length - accepted };
}

type Point = { lat: number; lng: number; accuracy: number | null; recordedAt: Date };

/** The latest-point upsert: only a newer point moves it. */
const latestUpsert = (ctx: Ctx, member: MemberRef, newest: Point) =>
  ctx.tx
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

/**
 * Off Citus (src/db/values.ts): ONE statement, the latest-point upsert as a CTE beside the
 * INSERT of the points, which come as one array literal per column (the organization and the
 * member once, not 500 times each), written here as text rather than handed to pg as 500-item JS
 * arrays it converts and escapes item by item. A data-modifying CTE always runs, referenced or
 * not, and the command tag counts the outer INSERT's rows: the points stored. One round trip
 * instead of two, and less work in Node, per batch: a phone's batch was the bench's slowest
 * request (issue 47).
 */
async function storeAsArrays(ctx: Ctx, member: MemberRef, points: Point[], newest: Point): Promise<number> {
  const times: string[] = [];
  const lats: number[] = [];
  const lngs: number[] = [];
  const accuracies: Array<number | string> = [];
  for (const p of points) {
    times.push(p.recordedAt.toISOString());
    lats.push(p.lat);
    lngs.push(p.lng);
    accuracies.push(p.accuracy ?? 'NULL');
  }
  const stored = await ctx.tx.execute(
    sql`WITH latest AS (
        INSERT INTO ${crewLatestLocations} (organization_id, member_id, user_id, recorded_at, lat, lng, accuracy)
        VALUES (${ctx.organizationId}, ${member.id}, ${member.userId}, ${newest.recordedAt.toISOString()}::timestamptz,
          ${newest.lat}::float8, ${newest.lng}::float8, ${newest.accuracy}::real)
        ON CONFLICT (organization_id, member_id) DO UPDATE
          SET lat = excluded.lat, lng = excluded.lng, accuracy = excluded.accuracy, recorded_at = excluded.recorded_at
          WHERE excluded.recorded_at > ${crewLatestLocations.recordedAt}
        RETURNING 1
      )
      INSERT INTO ${crewLocations} (organization_id, member_id, recorded_at, lat, lng, accuracy)
      SELECT ${ctx.organizationId}, ${member.id}, * FROM unnest(${arrayLiteral(times)}::timestamptz[],
        ${arrayLiteral(lats)}::float8[], ${arrayLiteral(lngs)}::float8[], ${arrayLiteral(accuracies)}::real[])
      ON CONFLICT DO NOTHING`,
  );
  return affectedRowsOf(stored);
}

/**
 * An array literal of items that need no quoting: ISO date-times, finite numbers (as JSON gave
 * them, maybe with an exponent) and the bare word NULL.
 */
const arrayLiteral = (items: ReadonlyArray<string | number>) => `{${items.join(',')}}`;

/**
 * On Citus: a multi-row INSERT of literal VALUES, which Citus routes to the organization's shard
 * (src/db/values.ts), then the latest-point upsert as a statement of its own. 6 values a point:
 * 500 points are far below one statement's limit, so this is one chunk.
 */
async function storeAsValues(ctx: Ctx, member: MemberRef, points: Point[], newest: Point): Promise<number> {
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
  await latestUpsert(ctx, member, newest);
  return accepted;
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
