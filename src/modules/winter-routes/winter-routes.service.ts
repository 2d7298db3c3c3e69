import { and, asc, eq, inArray, notInArray, type SQL } from 'drizzle-orm';
import { winterRouteStops, winterRoutes, winterRuns } from '../../db/schema/index.js';
import { AppError, invalidField, notFound } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { fromCents, toCents } from '../../platform/money.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import type { Ctx } from '../../platform/tenancy.js';
import { requireCrew } from '../crew-tracking/crew-tracking.refs.js';
import { liveProperties, requireProperties } from '../customers/customers.refs.js';
import { optimizeRoute, roundKm } from './winter-routes.optimize.js';
import type {
  BillingMode,
  CreateRouteInput,
  StopInputT,
  UpdateRouteInput,
  WinterService,
} from './winter-routes.schemas.js';

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

const mine = (ctx: Ctx, id: string) =>
  and(eq(winterRoutes.organizationId, ctx.organizationId), eq(winterRoutes.id, id));

export async function loadRoute(ctx: Ctx, id: string, lock = false): Promise<RouteRow> {
  const q = ctx.tx.select().from(winterRoutes).where(mine(ctx, id));
  const [row] = lock ? await q.for('update') : await q;
  if (!row) throw notFound('Winter route');
  return row;
}

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
  const now = new Date();
  const fresh = [];
  for (const stop of stops) {
    const current = existing.get(stop.propertyId);
    if (current) {
      await ctx.tx
        .update(winterRouteStops)
        .set({ ...stop, updatedAt: now })
        .where(and(eq(winterRouteStops.organizationId, ctx.organizationId), eq(winterRouteStops.id, current.id)));
    } else {
      fresh.push({ ...stop, id: newId('wst'), organizationId: ctx.organizationId, routeId });
    }
  }
  if (fresh.length > 0) await ctx.tx.insert(winterRouteStops).values(fresh);
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

/** Reorders the stops to shorten the open path from the depot (never longer than before). */
export async function optimize(ctx: Ctx, id: string) {
  const route = await loadRoute(ctx, id, true);
  const stops = (await stopsOf(ctx, [id])).get(id) ?? [];
  const props = await liveProperties(
    ctx,
    stops.map((s) => s.propertyId),
  );
  const depot =
    route.depotLat === null || route.depotLng === null ? null : { lat: route.depotLat, lng: route.depotLng };
  const result = optimizeRoute(
    depot,
    stops.map((s) => {
      const p = props.get(s.propertyId);
      return { id: s.id, point: p && p.lat !== null && p.lng !== null ? { lat: p.lat, lng: p.lng } : null };
    }),
  );
  const byId = new Map(stops.map((s) => [s.id, s]));
  const now = new Date();
  const reordered: StopRow[] = [];
  for (const [index, stopId] of result.order.entries()) {
    const stop = byId.get(stopId) as StopRow;
    const sequence = index + 1;
    if (stop.sequence !== sequence) {
      await ctx.tx
        .update(winterRouteStops)
        .set({ sequence, updatedAt: now })
        .where(and(eq(winterRouteStops.organizationId, ctx.organizationId), eq(winterRouteStops.id, stopId)));
    }
    reordered.push({ ...stop, sequence });
  }
  if (reordered.some((s, i) => s.id !== stops[i]?.id)) {
    await ctx.tx.update(winterRoutes).set({ updatedAt: now }).where(mine(ctx, id));
  }
  return {
    distanceBeforeKm: roundKm(result.beforeKm),
    distanceAfterKm: roundKm(result.afterKm),
    stops: reordered.map(stopView),
  };
}
