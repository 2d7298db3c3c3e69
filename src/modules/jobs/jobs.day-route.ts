import { and, eq, ne, type SQL, sql } from 'drizzle-orm';
import { jobs } from '../../db/schema/index.js';
import { withCalendarDates } from '../../platform/calendar-date.js';
import { invalidField } from '../../platform/errors.js';
import { haversineKm, optimizeRoute, type Point, roundKm } from '../../platform/route-optimizer.js';
import type { Ctx } from '../../platform/tenancy.js';
import { requireCrew } from '../crew-tracking/crew-tracking.refs.js';
import { expandParties } from '../properties/properties.expand.js';
import { getOrgSettings } from '../settings/settings.service.js';
import { requireMembers } from './jobs.service.js';
import type { JobStatus } from './jobs.states.js';

/*
 * A crew's day (operations.md §9): the day's jobs of one crew (or one member) in a
 * driving order from the organization's depot, by the same optimizer as winter routes.
 */

export interface DayRouteQuery {
  date: string;
  crewId?: string | undefined;
  assignedTo?: string | undefined;
}

async function dayStops(ctx: Ctx, q: DayRouteQuery) {
  const { date } = await withCalendarDates(
    { date: q.date },
    ['date'],
    async () => (await getOrgSettings(ctx)).timezone,
  );
  if ((q.crewId === undefined) === (q.assignedTo === undefined)) {
    throw invalidField('crewId', 'give exactly one of crewId or assignedTo');
  }
  const where: SQL[] = [
    eq(jobs.organizationId, ctx.organizationId),
    eq(jobs.scheduledDate, date),
    // The day's work: not canceled, not an unpublished draft.
    ne(jobs.status, 'canceled'),
    ne(jobs.status, 'draft'),
  ];
  if (q.crewId !== undefined) {
    await requireCrew(ctx, q.crewId);
    where.push(eq(jobs.crewId, q.crewId));
  } else {
    await requireMembers(ctx, [q.assignedTo as string]);
    where.push(sql`${jobs.assignedTo} @> ARRAY[${q.assignedTo}]::text[]`);
  }
  // The current order is the optimizer's starting point (it never answers a longer one).
  const rows = await ctx.tx
    .select({
      id: jobs.id,
      status: jobs.status,
      startTime: jobs.startTime,
      durationMinutes: jobs.durationMinutes,
      services: jobs.services,
      customerId: jobs.customerId,
      propertyId: jobs.propertyId,
    })
    .from(jobs)
    .where(and(...where))
    .orderBy(sql`${jobs.routeOrder} NULLS LAST`, sql`${jobs.startsAt} NULLS LAST`, jobs.createdAt, jobs.id);
  // Who and where at each stop (what a crew reads from its phone): two queries for the whole
  // day through the owners of customers and properties; the property's coordinates place the stop.
  const detailed = await expandParties(ctx, rows, new Set(['customer', 'property'] as const));
  const { depot } = await getOrgSettings(ctx);
  const points = new Map<string, Point | null>(
    detailed.map((r) => {
      const place = r.property;
      return [r.id, place && place.lat !== null && place.lng !== null ? { lat: place.lat, lng: place.lng } : null];
    }),
  );
  const { order } = optimizeRoute(
    depot,
    detailed.map((r) => ({ id: r.id, point: points.get(r.id) ?? null })),
  );
  // Each leg from the previous stop with coordinates (the first from the depot; 0 without one).
  let previous: Point | null = depot;
  let total = 0;
  const byId = new Map(detailed.map((r) => [r.id, r]));
  const stops = order.map((jobId, i) => {
    const p = points.get(jobId) ?? null;
    const leg = p && previous ? roundKm(haversineKm(previous, p)) : 0;
    if (p) previous = p;
    total += leg;
    const job = byId.get(jobId) as (typeof detailed)[number];
    return {
      jobId,
      routeOrder: i + 1,
      distanceKm: leg,
      status: job.status as JobStatus,
      startTime: job.startTime,
      durationMinutes: job.durationMinutes,
      services: job.services,
      customerId: job.customerId,
      propertyId: job.propertyId,
      ...(job.customer ? { customer: job.customer } : {}),
      property: job.property ?? null,
    };
  });
  return {
    date,
    stops,
    distanceKm: roundKm(total),
  };
}

/** The day's stops in a driving order, with each leg and the total, in km (2 decimals). */
export const dayRoute = (ctx: Ctx, q: DayRouteQuery) => dayStops(ctx, q);

/** Stores the day route's order as each job's routeOrder, in one statement. */
export async function applyDayRoute(ctx: Ctx, q: DayRouteQuery) {
  const route = await dayStops(ctx, q);
  if (route.stops.length > 0) {
    await ctx.tx.execute(sql`
      UPDATE jobs j SET route_order = o.n, updated_at = now()
      FROM unnest(${sql.param(route.stops.map((s) => s.jobId))}::text[]) WITH ORDINALITY AS o(id, n)
      WHERE j.organization_id = ${ctx.organizationId} AND j.id = o.id`);
  }
  return route;
}
