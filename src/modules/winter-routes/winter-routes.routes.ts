import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { EmptyBody, IdParams, NoContent } from '../../platform/schemas.js';
import type { Ctx } from '../../platform/tenancy.js';
import type { InvoiceDetailView } from '../invoices/invoices.service.js';
import { stormReport } from './storm-billing.service.js';
import {
  createStorm,
  dispatch,
  getRun,
  getStorm,
  listRuns,
  listStorms,
  recordVisit,
  updateStorm,
} from './storms.service.js';
import {
  CreateRouteBody,
  CreateStormBody,
  DispatchBody,
  DispatchResponse,
  OptimizeResponse,
  RecordVisitBody,
  ReplaceStopsBody,
  RouteList,
  RouteListQuery,
  RouteResponse,
  RunList,
  RunListQuery,
  RunResponse,
  StormInvoiceResponse,
  StormList,
  StormListQuery,
  StormReportResponse,
  StormResponse,
  UpdateRouteBody,
  UpdateStormBody,
  VisitParams,
} from './winter-routes.schemas.js';
import {
  createRoute,
  deleteRoute,
  getRoute,
  listRoutes,
  optimize,
  replaceStops,
  updateRoute,
} from './winter-routes.service.js';

/**
 * `/api/winter-routes` (operations.md §6): routes and stops, storms, dispatch, runs and
 * visits, storm billing and the storm report. Owner/admin plan routes, storms and billing;
 * every role reads and records visits (the crews).
 */
/**
 * The flows (src/flows/) these routes start. src/modules/index.ts hands them in, so this
 * module never imports the layer above it.
 */
export interface WinterRouteFlows {
  billStorm(ctx: Ctx, stormId: string): Promise<{ invoices: InvoiceDetailView[] }>;
}

export default async function winterRoutes(fastify: FastifyInstance, { flows }: { flows: WinterRouteFlows }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  const tags = ['winter-routes'];
  const admin = { roles: ['owner', 'admin'] } as const;
  const base = '/api/winter-routes';

  app.get(
    base,
    {
      schema: {
        tags,
        summary: 'List snow routes (newest first), with their stops',
        description: 'Every role may read routes; filter by active; paginated like every list.',
        querystring: RouteListQuery,
        response: { 200: RouteList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listRoutes(ctx, request.query, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.post(
    base,
    {
      config: admin,
      schema: {
        tags,
        summary: 'Create a snow route with ordered stops (owner/admin)',
        description:
          'Owner/admin only. Stops are in driving order (sequence from 1). A property of another organization, a deleted one, or the same property twice → 400. crewId must be a crew of this organization (400). Prices are ≥ 0 with two decimals.',
        body: CreateRouteBody,
        response: { 201: RouteResponse },
      },
    },
    async (request, reply) => {
      const route = await inRequestTenant(database.db, request, (ctx) => createRoute(ctx, request.body));
      return reply.code(201).send({ data: route });
    },
  );

  app.get(
    '/api/winter-routes/storms',
    {
      schema: {
        tags,
        summary: 'List storms (newest first)',
        description: 'Every role may read storms; paginated like every list.',
        querystring: StormListQuery,
        response: { 200: StormList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listStorms(ctx, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.post(
    '/api/winter-routes/storms',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Record a storm: snowfall in inches and whether it iced (owner/admin)',
        description:
          'Owner/admin only. snowfallInches ≥ 0 (negative → 400); endedAt not before startedAt (400). Dispatch it next.',
        body: CreateStormBody,
        response: { 201: StormResponse },
      },
    },
    async (request, reply) => {
      const storm = await inRequestTenant(database.db, request, (ctx) => createStorm(ctx, request.body));
      return reply.code(201).send({ data: storm });
    },
  );

  app.get(
    '/api/winter-routes/storms/:id',
    {
      schema: {
        tags,
        summary: 'One storm',
        description: 'Every role may read a storm.',
        params: IdParams,
        response: { 200: StormResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => getStorm(ctx, request.params.id)),
    }),
  );

  app.patch(
    '/api/winter-routes/storms/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Correct a storm or set its end (owner/admin)',
        description: 'Owner/admin only. Runs already dispatched keep their visits; endedAt not before startedAt (400).',
        params: IdParams,
        body: UpdateStormBody,
        response: { 200: StormResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => updateStorm(ctx, request.params.id, request.body)),
    }),
  );

  app.post(
    '/api/winter-routes/storms/:id/dispatch',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Dispatch a storm: one run per route, a visit per triggered stop (owner/admin)',
        description:
          "Owner/admin only. A stop is visited when its triggerInches ≤ the storm's snowfall, or when the storm iced and the stop salts or de-ices. Without routeIds every active route not yet dispatched that has such a stop gets a run (no empty runs). A named route already dispatched → 409 CONFLICT; inactive or without a triggered stop → 409 INVALID_STATE; unknown → 400. Visits carry the stop's billing as it is now.",
        params: IdParams,
        body: DispatchBody,
        response: { 201: DispatchResponse },
      },
    },
    async (request, reply) => {
      const result = await inRequestTenant(database.db, request, (ctx) =>
        dispatch(ctx, request.params.id, request.body ?? null),
      );
      return reply.code(201).send({ data: result });
    },
  );

  app.post(
    '/api/winter-routes/storms/:id/invoice',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Bill a storm: one draft invoice per customer for its serviced, unbilled visits (owner/admin)',
        description:
          'Owner/admin only. per_push stops bill price × pushes, per_event stops price once; seasonal stops are billed by their contract, not here. One line per visit (services, property address, storm name); numbering, tax, events and ledger are those of any invoice. A second call bills only new visits; with nothing new → 200 {invoices: []}.',
        params: IdParams,
        body: EmptyBody,
        response: { 200: StormInvoiceResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => flows.billStorm(ctx, request.params.id)),
    }),
  );

  app.get(
    '/api/winter-routes/storms/:id/report',
    {
      schema: {
        tags,
        summary: 'Storm report per route: visits serviced/skipped/pending, pushes, salt, service times, billed',
        description:
          'One row per route dispatched for the storm: serviced, skipped and pending visits, pushes and salt (lb) recorded, first and last service time, and the amount billed (before tax).',
        params: IdParams,
        response: { 200: StormReportResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => stormReport(ctx, request.params.id)),
    }),
  );

  app.get(
    '/api/winter-routes/runs',
    {
      schema: {
        tags,
        summary: 'List runs (newest first), by storm or route, with their visits',
        description: 'Every role may read runs; paginated like every list.',
        querystring: RunListQuery,
        response: { 200: RunList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listRuns(ctx, request.query, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/winter-routes/runs/:id',
    {
      schema: {
        tags,
        summary: 'One run with its visits in sequence',
        description: 'Every role may read a run.',
        params: IdParams,
        response: { 200: RunResponse },
      },
    },
    async (request) => ({ data: await inRequestTenant(database.db, request, (ctx) => getRun(ctx, request.params.id)) }),
  );

  app.post(
    '/api/winter-routes/runs/:id/visits/:visitId',
    {
      schema: {
        tags,
        summary: 'Record a visit: serviced (pushes ≥ 1, salt, notes) or skipped; answers the run',
        description:
          'Every role (the crew). Visits may be recorded in any order; recording again overwrites until the visit is billed (then 409 INVALID_STATE). A visit of another run → 404. The run becomes in_progress after its first visit and completed when none is pending.',
        params: VisitParams,
        body: RecordVisitBody,
        response: { 200: RunResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) =>
        recordVisit(ctx, request.params.id, request.params.visitId, request.body),
      ),
    }),
  );

  app.get(
    '/api/winter-routes/:id',
    {
      schema: {
        tags,
        summary: 'One snow route with its stops in sequence',
        description: 'Every role may read a route.',
        params: IdParams,
        response: { 200: RouteResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => getRoute(ctx, request.params.id)),
    }),
  );

  app.patch(
    '/api/winter-routes/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Update a route: name, crew, depot, or activate/deactivate it (owner/admin)',
        description:
          'Owner/admin only. active false keeps the route out of dispatch; stops are replaced with PUT /stops.',
        params: IdParams,
        body: UpdateRouteBody,
        response: { 200: RouteResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => updateRoute(ctx, request.params.id, request.body)),
    }),
  );

  app.delete(
    '/api/winter-routes/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Delete a route never dispatched (owner/admin); dispatched → 409, deactivate it instead',
        description: 'Owner/admin only. A route with runs keeps its history: 409 CONFLICT.',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => deleteRoute(ctx, request.params.id));
      return reply.code(204).send(null);
    },
  );

  app.put(
    '/api/winter-routes/:id/stops',
    {
      config: admin,
      schema: {
        tags,
        summary: "Replace a route's stops; their order is the sequence (owner/admin)",
        description:
          'Owner/admin only. The list replaces the current one (sequence = position, from 1); a property already on the route keeps its stop id. Foreign, deleted or repeated properties → 400, nothing changed.',
        params: IdParams,
        body: ReplaceStopsBody,
        response: { 200: RouteResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) =>
        replaceStops(ctx, request.params.id, request.body.stops),
      ),
    }),
  );

  app.post(
    '/api/winter-routes/:id/optimize',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Reorder the stops to shorten the drive from the depot (owner/admin)',
        description:
          'Owner/admin only. Great-circle distances over the properties’ coordinates, open path from the depot (without one, from the first stop), nearest neighbour then 2-opt; deterministic and never longer than the current order. Stops without coordinates go last in their current order. Distances in km, 2 decimals. The order is computed without holding the route; if its stops or depot changed meanwhile → 409 CONFLICT (optimize again).',
        params: IdParams,
        body: EmptyBody,
        response: { 200: OptimizeResponse },
      },
    },
    async (request) => ({
      data: await optimize((fn) => inRequestTenant(database.db, request, fn), request.params.id),
    }),
  );
}
