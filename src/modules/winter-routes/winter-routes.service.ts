import { and, asc, eq, inArray, notInArray, type SQL, sql } from 'drizzle-orm';
import { winterRouteStops, winterRoutes, winterRuns } from '../../db/schema/index.js';
import { AppError, invalidField } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { fromCents, toCents } from '../../platform/money.js';
import { ownedRows } from '../../platform/owned-rows.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import { optimizeRoute, roundKm } from '../../platform/route-optimizer.js';
import type { Ctx } from '../../platform/tenancy.js';
import { requireCrew } from '../crew-tracking/crew-tracking.refs.js';
import { liveProperties, requireProperties } from '../customers/customers.refs.js';
import type {
  BillingMode,
  CreateRouteInput,
  StopInputT,
  UpdateRouteInput,
  WinterService,
} from './winter-routes.schemas.js';

/** Runs `fn` in one tenant transaction (a request's, or a test's): optimize needs two. */
export type InTenant = <T>(fn: (ctx: Ctx) => Promise<T>) => Promise<T>;

/** Rows per set-based statement: bounded so the parameters stay far below PostgreSQL's 65 535. */
export const ROWS_PER_STATEMENT = 1000;

export function chunked<T>(rows: readonly T[], size = ROWS_PER_STATEMENT): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

/**
 * `(a, b), (c, d)` for `UPDATE … FROM (VALUES …) AS v(…)`: many rows changed by one
 * statement instead of one statement per row. The values arrive as text; the
 * statement casts them where the column is not text.
 */
export const valuesList = (rows: ReadonlyArray<ReadonlyArray<string | number | null>>) =>
  sql.join(
    rows.map(
      (r) =>
        sql`(${sql.join(
          r.map((v) => sql`${v}`),
          sql`, `,
        )})`,
    ),
    sql`, `,
  );

export type RouteRow = typeof winterRoutes.$inferSelect;
export type StopRow = typeof winterRouteStops.$inferSelect;

export function stopView(s: StopRow) {
  return {
    id: s.id,
    propertyId: s.propertyId,
    sequence: s.sequence,
    services: s.services as WinterService[],
    triggerInches: s.triggerInches,
    billing: { mode: s.billingMode as BillingMode, price: fromCents(s.priceCents) },
    notes: s.notes,
  };
}

export function routeView(r: RouteRow, stops: StopRow[]) {
  return {
    id: r.id,
    name: r.name,
    crewId: r.crewId,
    depot: r.depotLat === null || r.depotLng === null ? null : { lat: r.depotLat, lng: r.depotLng },
    active: r.active,
    stops: stops.map(stopView),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

const routeRows = ownedRows(winterRoutes, 'Winter route');
const { mine } = routeRows;

export const loadRoute = routeRows.find;

/** Stops of the given routes, in sequence, by route id. */
export async function stopsOf(ctx: Ctx, routeIds: string[]): Promise<Map<string, StopRow[]>> {
  const byRoute = new Map<string, StopRow[]>(routeIds.map((id) => [id, []]));
  if (routeIds.length === 0) return byRoute;
  const rows = await ctx.tx
    .select()
    .from(winterRouteStops)
    .where(and(eq(winterRouteStops.organizationId, ctx.organizationId), inArray(winterRouteStops.routeId, routeIds)))
    .orderBy(asc(winterRouteStops.routeId), asc(winterRouteStops.sequence), asc(winterRouteStops.id));
  for (const row of rows) byRoute.get(row.routeId)?.push(row);
  return byRoute;
}

async function viewOf(ctx: Ctx, row: RouteRow) {
  return routeView(row, (await stopsOf(ctx, [row.id])).get(row.id) ?? []);
}

/**
 * Checks a stop list (properties live and of this organization, each once, prices exact)
 * before anything is written, so a bad list writes nothing.
 */
async function checkStops(ctx: Ctx, stops: StopInputT[]) {
  const seen = new Map<string, number>();
  stops.forEach((s, i) => {
    const first = seen.get(s.propertyId);
    if (first !== undefined) {
      throw invalidField(
        `stops[${i}].propertyId`,
        `property ${s.propertyId} is already stop ${first + 1} of this route`,
      );
    }
    seen.set(s.propertyId, i);
  });
  await requireProperties(
    ctx,
    stops.map((s) => s.propertyId),
    (i) => `stops[${i}].propertyId`,
  );
  return stops.map((s, i) => ({
    propertyId: s.propertyId,
    sequence: i + 1,
    services: [...s.services],
    triggerInches: s.triggerInches ?? 2,
    billingMode: s.billing.mode,
    priceCents: toCents(s.billing.price, `stops[${i}].billing.price`),
    notes: s.notes?.trim() || null,
  }));
}

/**
 * Replaces a route's stops: a property already on the route keeps its stop id (so
 * visits and clients can follow it), the others are added or removed.
 */
async function writeStops(ctx: Ctx, routeId: string, stops: Awaited<ReturnType<typeof checkStops>>) {
  const where: SQL[] = [eq(winterRouteStops.organizationId, ctx.organizationId), eq(winterRouteStops.routeId, routeId)];
  const keep = stops.map((s) => s.propertyId);
  if (keep.length > 0) where.push(notInArray(winterRouteStops.propertyId, keep));
  await ctx.tx.delete(winterRouteStops).where(and(...where));
  const existing = new Map(((await stopsOf(ctx, [routeId])).get(routeId) ?? []).map((s) => [s.propertyId, s] as const));
  const kept = stops.flatMap((stop) => {
    const current = existing.get(stop.propertyId);
    return current ? [{ id: current.id, stop }] : [];
  });
  // The stops that stay, rewritten in one statement per chunk (not one per stop).
  for (const chunk of chunked(kept)) {
    await ctx.tx.execute(sql`
      UPDATE winter_route_stops s SET sequence = v.sequence::int,
        services = ARRAY(SELECT jsonb_array_elements_text(v.services::jsonb)),
        trigger_inches = v.trigger_inches::double precision, billing_mode = v.billing_mode,
        price_cents = v.price_cents::bigint, notes = v.notes, updated_at = now()
      FROM (VALUES ${valuesList(
        chunk.map(({ id, stop }) => [
          id,
          stop.sequence,
          JSON.stringify(stop.services),
          stop.triggerInches,
          stop.billingMode,
          stop.priceCents,
          stop.notes,
        ]),
      )}) AS v(id, sequence, services, trigger_inches, billing_mode, price_cents, notes)
      WHERE s.organization_id = ${ctx.organizationId} AND s.route_id = ${routeId} AND s.id = v.id`);
  }
  const fresh = stops
    .filter((stop) => !existing.has(stop.propertyId))
    .map((stop) => ({ ...stop, id: newId('wst'), organizationId: ctx.organizationId, routeId }));
  for (const chunk of chunked(fresh)) await ctx.tx.insert(winterRouteStops).values(chunk);
}

export async function createRoute(ctx: Ctx, input: CreateRouteInput) {
  if (input.crewId) await requireCrew(ctx, input.crewId);
  const stops = await checkStops(ctx, input.stops ?? []);
  const [row] = await ctx.tx
    .insert(winterRoutes)
    .values({
      id: newId('wrt'),
      organizationId: ctx.organizationId,
      name: input.name.trim(),
      crewId: input.crewId ?? null,
      depotLat: input.depot?.lat ?? null,
      depotLng: input.depot?.lng ?? null,
      active: input.active ?? true,
    })
    .returning();
  const route = row as RouteRow;
  await writeStops(ctx, route.id, stops);
  return viewOf(ctx, route);
}

export async function listRoutes(ctx: Ctx, f: { active?: 'true' | 'false' | undefined }, page: Page) {
  const where: SQL[] = [eq(winterRoutes.organizationId, ctx.organizationId)];
  if (f.active !== undefined) where.push(eq(winterRoutes.active, f.active === 'true'));
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, winterRoutes, and(...where), page);
  const stops = await stopsOf(
    ctx,
    rows.map((r) => r.id),
  );
  return { rows: rows.map((r) => routeView(r, stops.get(r.id) ?? [])), ...more };
}

export async function getRoute(ctx: Ctx, id: string) {
  return viewOf(ctx, await loadRoute(ctx, id));
}

export async function updateRoute(ctx: Ctx, id: string, input: UpdateRouteInput) {
  await loadRoute(ctx, id, true);
  if (input.crewId) await requireCrew(ctx, input.crewId);
  const patch: Partial<RouteRow> = {};
  if (input.name !== undefined) {
    patch.name = input.name.trim();
    if (!patch.name) throw invalidField('name', 'must not be empty');
  }
  if (input.crewId !== undefined) patch.crewId = input.crewId;
  if (input.depot !== undefined) {
    patch.depotLat = input.depot?.lat ?? null;
    patch.depotLng = input.depot?.lng ?? null;
  }
  if (input.active !== undefined) patch.active = input.active;
  const [row] = await ctx.tx
    .update(winterRoutes)
    .set({ ...patch, updatedAt: new Date() })
    .where(mine(ctx, id))
    .returning();
  return viewOf(ctx, row as RouteRow);
}

export async function replaceStops(ctx: Ctx, id: string, stops: StopInputT[]) {
  const route = await loadRoute(ctx, id, true);
  await writeStops(ctx, id, await checkStops(ctx, stops));
  const [row] = await ctx.tx.update(winterRoutes).set({ updatedAt: new Date() }).where(mine(ctx, id)).returning();
  return viewOf(ctx, (row as RouteRow | undefined) ?? route);
}

/** A route that was dispatched keeps its history: 409, deactivate it instead. */
export async function deleteRoute(ctx: Ctx, id: string) {
  await loadRoute(ctx, id, true);
  const [run] = await ctx.tx
    .select({ id: winterRuns.id })
    .from(winterRuns)
    .where(and(eq(winterRuns.organizationId, ctx.organizationId), eq(winterRuns.routeId, id)))
    .limit(1);
  if (run) throw new AppError('CONFLICT', 'This route has been dispatched; deactivate it instead (PATCH active false)');
  await ctx.tx.delete(winterRoutes).where(mine(ctx, id));
}

/** What optimize reads: the route's depot and its stops with their coordinates, in order. */
async function optimizeInput(ctx: Ctx, route: RouteRow) {
  const stops = (await stopsOf(ctx, [route.id])).get(route.id) ?? [];
  const props = await liveProperties(
    ctx,
    stops.map((s) => s.propertyId),
  );
  const depot =
    route.depotLat === null || route.depotLng === null ? null : { lat: route.depotLat, lng: route.depotLng };
  const points = stops.map((s) => {
    const p = props.get(s.propertyId);
    return { id: s.id, point: p && p.lat !== null && p.lng !== null ? { lat: p.lat, lng: p.lng } : null };
  });
  return { stops, depot, points };
}

export interface OptimizeHooks {
  /** Tests: runs after the new order is computed, before the route is locked to write it. */
  beforeWrite?: () => Promise<void>;
}

/**
 * Reorders the stops to shorten the open path from the depot (never longer than before).
 * The stops are read in one transaction and the order computed with none open (2-opt
 * on a long route takes a while); then the route is locked and the order written only
 * if the stops, their places and the depot are still what was computed on. If they
 * changed meanwhile the result would be stale: 409 CONFLICT, and the client optimizes
 * again (rather than the server recomputing under the lock it avoids holding).
 */
export async function optimize(tenant: InTenant, id: string, hooks: OptimizeHooks = {}) {
  const read = await tenant(async (ctx) => optimizeInput(ctx, await loadRoute(ctx, id)));
  const result = optimizeRoute(read.depot, read.points);
  await hooks.beforeWrite?.();
  return tenant(async (ctx) => {
    const current = await optimizeInput(ctx, await loadRoute(ctx, id, true));
    if (JSON.stringify([current.depot, current.points]) !== JSON.stringify([read.depot, read.points])) {
      throw new AppError('CONFLICT', 'The route changed while it was being optimized; optimize it again');
    }
    const byId = new Map(current.stops.map((s) => [s.id, s]));
    const reordered = result.order.map((stopId, index) => ({ ...(byId.get(stopId) as StopRow), sequence: index + 1 }));
    const moved = reordered.filter((s) => s.sequence !== byId.get(s.id)?.sequence);
    // Every stop that moved, in one statement per chunk (not one per stop).
    for (const chunk of chunked(moved)) {
      await ctx.tx.execute(sql`
        UPDATE winter_route_stops s SET sequence = v.sequence::int, updated_at = now()
        FROM (VALUES ${valuesList(chunk.map((m) => [m.id, m.sequence]))}) AS v(id, sequence)
        WHERE s.organization_id = ${ctx.organizationId} AND s.route_id = ${id} AND s.id = v.id`);
    }
    if (moved.length > 0) await ctx.tx.update(winterRoutes).set({ updatedAt: new Date() }).where(mine(ctx, id));
    return {
      distanceBeforeKm: roundKm(result.beforeKm),
      distanceAfterKm: roundKm(result.afterKm),
      stops: reordered.map(stopView),
    };
  });
}
