import { and, asc, eq, inArray, type SQL } from 'drizzle-orm';
import { storms, winterRoutes, winterRuns, winterVisits } from '../../db/schema/index.js';
import { AppError, invalidField, invalidState, notFound } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { fromCents } from '../../platform/money.js';
import { ownedRows } from '../../platform/owned-rows.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import { take } from '../../platform/state-machine.js';
import type { Ctx } from '../../platform/tenancy.js';
import { liveProperties } from '../customers/customers.refs.js';
import type {
  BillingMode,
  CreateStormInput,
  DispatchInput,
  RecordVisitInput,
  UpdateStormInput,
  WinterService,
} from './winter-routes.schemas.js';
import { chunked, type RouteRow, type StopRow, stopsOf } from './winter-routes.service.js';
import {
  type RunStatus,
  runActionFor,
  runMachine,
  type VisitStatus,
  visitMachine,
  visitState,
} from './winter-routes.states.js';

export type StormRow = typeof storms.$inferSelect;
export type RunRow = typeof winterRuns.$inferSelect;
export type VisitRow = typeof winterVisits.$inferSelect;

export const stormView = (s: StormRow) => ({
  id: s.id,
  name: s.name,
  startedAt: s.startedAt,
  endedAt: s.endedAt,
  snowfallInches: s.snowfallInches,
  ice: s.ice,
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
});

export const visitView = (v: VisitRow) => ({
  id: v.id,
  runId: v.runId,
  stopId: v.stopId,
  propertyId: v.propertyId,
  customerId: v.customerId,
  sequence: v.sequence,
  services: v.services as WinterService[],
  billing: { mode: v.billingMode as BillingMode, price: fromCents(v.priceCents) },
  status: v.status as VisitStatus,
  servicedAt: v.servicedAt,
  pushes: v.pushes,
  saltLbs: v.saltLbs,
  notes: v.notes,
  billed: v.invoiceId !== null,
  invoiceId: v.invoiceId,
});

export const runView = (r: RunRow, visits: VisitRow[]) => ({
  id: r.id,
  stormId: r.stormId,
  routeId: r.routeId,
  status: r.status as RunStatus,
  visits: visits.map(visitView),
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

const stormRows = ownedRows(storms, 'Storm');
const stormMine = stormRows.mine;

function checkEnd(startedAt: Date, endedAt: Date | null) {
  if (endedAt && endedAt < startedAt) throw invalidField('endedAt', 'must not be before startedAt');
}

export const loadStorm = stormRows.find;

export async function createStorm(ctx: Ctx, input: CreateStormInput) {
  const startedAt = new Date(input.startedAt);
  const endedAt = input.endedAt ? new Date(input.endedAt) : null;
  checkEnd(startedAt, endedAt);
  const [row] = await ctx.tx
    .insert(storms)
    .values({
      id: newId('stm'),
      organizationId: ctx.organizationId,
      name: input.name.trim(),
      startedAt,
      endedAt,
      snowfallInches: input.snowfallInches,
      ice: input.ice ?? false,
    })
    .returning();
  return stormView(row as StormRow);
}

export async function listStorms(ctx: Ctx, page: Page) {
  const { rows, ...more } = await listPage(
    ctx.tx,
    ctx.organizationId,
    storms,
    eq(storms.organizationId, ctx.organizationId),
    page,
  );
  return { rows: rows.map(stormView), ...more };
}

export async function getStorm(ctx: Ctx, id: string) {
  return stormView(await loadStorm(ctx, id));
}

/** Snowfall and ice may be corrected; runs already dispatched keep their visits. */
export async function updateStorm(ctx: Ctx, id: string, input: UpdateStormInput) {
  const current = await loadStorm(ctx, id, true);
  const patch: Partial<StormRow> = {};
  if (input.name !== undefined) {
    patch.name = input.name.trim();
    if (!patch.name) throw invalidField('name', 'must not be empty');
  }
  if (input.startedAt !== undefined) patch.startedAt = new Date(input.startedAt);
  if (input.endedAt !== undefined) patch.endedAt = input.endedAt ? new Date(input.endedAt) : null;
  if (input.snowfallInches !== undefined) patch.snowfallInches = input.snowfallInches;
  if (input.ice !== undefined) patch.ice = input.ice;
  checkEnd(patch.startedAt ?? current.startedAt, patch.endedAt === undefined ? current.endedAt : patch.endedAt);
  const [row] = await ctx.tx
    .update(storms)
    .set({ ...patch, updatedAt: new Date() })
    .where(stormMine(ctx, id))
    .returning();
  return stormView(row as StormRow);
}

/** Visits of the given runs, in sequence, by run id. */
export async function visitsOf(ctx: Ctx, runIds: string[]): Promise<Map<string, VisitRow[]>> {
  const byRun = new Map<string, VisitRow[]>(runIds.map((id) => [id, []]));
  if (runIds.length === 0) return byRun;
  const rows = await ctx.tx
    .select()
    .from(winterVisits)
    .where(and(eq(winterVisits.organizationId, ctx.organizationId), inArray(winterVisits.runId, runIds)))
    .orderBy(asc(winterVisits.runId), asc(winterVisits.sequence), asc(winterVisits.id));
  for (const row of rows) byRun.get(row.runId)?.push(row);
  return byRun;
}

/** A stop is visited when the snowfall reaches its trigger, or on ice when it salts or de-ices. */
export const qualifies = (stop: StopRow, storm: StormRow) =>
  stop.triggerInches <= storm.snowfallInches ||
  (storm.ice && (stop.services.includes('salt') || stop.services.includes('deice')));

const alreadyDispatched = (name: string) =>
  new AppError('CONFLICT', `Route ${name} has already been dispatched for this storm`);

/**
 * One run per route with a visit per qualifying stop, snapshotting the stop and its
 * billing. The storm row is locked, so dispatches of one storm run one after the other;
 * the unique (storm, route) index refuses a second run whatever happens.
 */
export async function dispatch(ctx: Ctx, stormId: string, input: DispatchInput) {
  const storm = await loadStorm(ctx, stormId, true);
  const named = input?.routeIds;
  const where: SQL[] = [eq(winterRoutes.organizationId, ctx.organizationId)];
  if (named) where.push(inArray(winterRoutes.id, named));
  else where.push(eq(winterRoutes.active, true));
  const routes = await ctx.tx
    .select()
    .from(winterRoutes)
    .where(and(...where))
    .orderBy(asc(winterRoutes.name), asc(winterRoutes.id));
  if (named) {
    const found = new Set(routes.map((r) => r.id));
    const missing = named.findIndex((id) => !found.has(id));
    if (missing >= 0) throw invalidField(`routeIds[${missing}]`, `no winter route ${named[missing]}`);
  }
  const done = new Set(
    (
      await ctx.tx
        .select({ routeId: winterRuns.routeId })
        .from(winterRuns)
        .where(and(eq(winterRuns.organizationId, ctx.organizationId), eq(winterRuns.stormId, stormId)))
    ).map((r) => r.routeId),
  );
  const stops = await stopsOf(
    ctx,
    routes.map((r) => r.id),
  );
  const props = await liveProperties(
    ctx,
    [...stops.values()].flat().map((s) => s.propertyId),
  );
  const plans: Array<{ route: RouteRow; stops: StopRow[] }> = [];
  for (const route of routes) {
    const qualifying = (stops.get(route.id) ?? []).filter((s) => qualifies(s, storm) && props.has(s.propertyId));
    if (named) {
      if (done.has(route.id)) throw alreadyDispatched(route.name);
      if (!route.active) throw invalidState(`Route ${route.name} is inactive; activate it before dispatching`);
      if (qualifying.length === 0) {
        throw invalidState(`Route ${route.name} has no stop that this storm triggers`);
      }
    } else if (done.has(route.id) || qualifying.length === 0) {
      continue;
    }
    plans.push({ route, stops: qualifying });
  }
  if (plans.length === 0) return { runs: [] };
  // One INSERT for the runs and one for the visits (per chunk), not one pair per route. A run
  // the unique (storm, route) index refuses was made by a concurrent dispatch.
  const planned = plans.map((plan) => ({
    id: newId('wrn'),
    organizationId: ctx.organizationId,
    stormId: storm.id,
    routeId: plan.route.id,
  }));
  const made = (await ctx.tx.insert(winterRuns).values(planned).onConflictDoNothing().returning()) as RunRow[];
  const runByRoute = new Map(made.map((r) => [r.routeId, r]));
  const refused = plans.find((plan) => !runByRoute.has(plan.route.id));
  if (refused) throw alreadyDispatched(refused.route.name);
  const visits = plans.flatMap((plan) =>
    plan.stops.map((s, i) => ({
      id: newId('wvs'),
      organizationId: ctx.organizationId,
      runId: (runByRoute.get(plan.route.id) as RunRow).id,
      stopId: s.id,
      propertyId: s.propertyId,
      customerId: (props.get(s.propertyId) as { customerId: string }).customerId,
      sequence: i + 1,
      services: [...s.services],
      billingMode: s.billingMode,
      priceCents: s.priceCents,
    })),
  );
  const inserted: VisitRow[] = [];
  for (const chunk of chunked(visits)) {
    inserted.push(...((await ctx.tx.insert(winterVisits).values(chunk).returning()) as VisitRow[]));
  }
  const byRun = new Map<string, VisitRow[]>();
  for (const v of inserted) {
    const list = byRun.get(v.runId) ?? [];
    list.push(v);
    byRun.set(v.runId, list);
  }
  return {
    runs: plans.map((plan) => {
      const run = runByRoute.get(plan.route.id) as RunRow;
      return runView(
        run,
        (byRun.get(run.id) ?? []).sort((a, b) => a.sequence - b.sequence),
      );
    }),
  };
}

export const loadRun = ownedRows(winterRuns, 'Run').find;

export async function listRuns(
  ctx: Ctx,
  f: { stormId?: string | undefined; routeId?: string | undefined },
  page: Page,
) {
  const where: SQL[] = [eq(winterRuns.organizationId, ctx.organizationId)];
  if (f.stormId) where.push(eq(winterRuns.stormId, f.stormId));
  if (f.routeId) where.push(eq(winterRuns.routeId, f.routeId));
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, winterRuns, and(...where), page);
  const visits = await visitsOf(
    ctx,
    rows.map((r) => r.id),
  );
  return { rows: rows.map((r) => runView(r, visits.get(r.id) ?? [])), ...more };
}

export async function getRun(ctx: Ctx, id: string) {
  const run = await loadRun(ctx, id);
  return runView(run, (await visitsOf(ctx, [id])).get(id) ?? []);
}

/**
 * Records (or re-records, until billed) one visit of a run; the run's status follows
 * from its visits. The run row is locked first, so concurrent recordings of one run
 * derive its status one after the other.
 */
export async function recordVisit(ctx: Ctx, runId: string, visitId: string, input: RecordVisitInput) {
  const run = await loadRun(ctx, runId, true);
  const [visit] = await ctx.tx
    .select()
    .from(winterVisits)
    .where(
      and(
        eq(winterVisits.organizationId, ctx.organizationId),
        eq(winterVisits.runId, runId),
        eq(winterVisits.id, visitId),
      ),
    )
    .for('update');
  if (!visit) throw notFound('Visit');
  const status = take(visitMachine, visitState(visit), input.status === 'serviced' ? 'service' : 'skip');
  const serviced = status === 'serviced';
  const now = new Date();
  await ctx.tx
    .update(winterVisits)
    .set({
      status,
      servicedAt: serviced ? (input.servicedAt ? new Date(input.servicedAt) : now) : null,
      pushes: serviced ? (input.pushes ?? 1) : null,
      saltLbs: input.saltLbs ?? null,
      notes: input.notes?.trim() || null,
      recordedAt: now,
      updatedAt: now,
    })
    .where(and(eq(winterVisits.organizationId, ctx.organizationId), eq(winterVisits.id, visitId)));
  const visits = (await visitsOf(ctx, [runId])).get(runId) ?? [];
  const pending = visits.filter((v) => v.status === 'pending').length;
  const next = take(runMachine, run.status as RunStatus, runActionFor(pending));
  let current = run;
  if (next !== run.status) {
    const [row] = await ctx.tx
      .update(winterRuns)
      .set({ status: next, updatedAt: now })
      .where(and(eq(winterRuns.organizationId, ctx.organizationId), eq(winterRuns.id, runId)))
      .returning();
    current = row as RunRow;
  }
  return runView(current, visits);
}
