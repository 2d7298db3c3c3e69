import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { EmptyBody, IdParams, NoContent } from '../../platform/schemas.js';
import type { Ctx } from '../../platform/tenancy.js';
import type { SendDeps } from '../billing/documents.js';
import { MessageResponse } from '../messages/messages.schemas.js';
import { twilioDeps } from '../messages/messages.twilio.js';
import { expandParties, expansionsOf } from '../properties/properties.expand.js';
import { applyDayRoute, dayRoute } from './jobs.day-route.js';
import { onMyWay } from './jobs.on-my-way.js';
import {
  CalendarQuery,
  CalendarResponse,
  ChecklistParams,
  ChecklistPatchBody,
  CreateJobBody,
  DayRouteQuery,
  DayRouteResponse,
  ExpandOnlyQuery,
  JobDetailResponse,
  JobListQuery,
  JobListResponse,
  UpdateJobBody,
} from './jobs.schemas.js';
import {
  createJob,
  getJob,
  jobCalendar,
  listJobs,
  publishJob,
  setChecklistItem,
  type UpdateJobInput,
} from './jobs.service.js';
import scheduleRoutes from './schedules/schedules.routes.js';

const OnMyWayBody = Type.Object(
  { etaMinutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 600, description: 'Minutes until arrival' })) },
  { additionalProperties: false },
);

/**
 * The flows (src/flows/) these routes start. src/modules/index.ts hands them in, so this
 * module never imports the layer above it.
 */
export interface JobFlows {
  /** src/flows/delete-referenced.ts: equipment, estimates, purchase orders and time entries naming the job let go first. */
  deleteJob(ctx: Ctx, id: string): Promise<void>;
  updateJobAndBillVisit(
    ctx: Ctx,
    id: string,
    input: UpdateJobInput,
    deps: SendDeps,
  ): Promise<Awaited<ReturnType<typeof getJob>>>;
}

export default async function jobRoutes(fastify: FastifyInstance, { flows }: { flows: JobFlows }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, config } = app.deps;
  const tags = ['jobs'];
  // Static /api/jobs/schedules paths win over /api/jobs/:id in Fastify's router.
  await scheduleRoutes(fastify);

  app.get(
    '/api/jobs',
    {
      schema: {
        tags,
        summary: 'List jobs, ordered by scheduledDate (then createdAt, id)',
        description: 'Filter by status, customer or date range. Paginated like every list (see the README).',
        querystring: JobListQuery,
        response: { 200: JobListResponse },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, async (ctx) => {
        const found = await listJobs(ctx, request.query, page);
        return { ...found, rows: await expandParties(ctx, found.rows, expansionsOf(request.query)) };
      });
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/jobs/calendar',
    {
      schema: {
        tags,
        operationId: 'getJobCalendar',
        summary: 'Jobs grouped by scheduled date (range required, at most 92 days)',
        description: "Dates are in the organization's timezone; unscheduled drafts are not included.",
        querystring: CalendarQuery,
        response: { 200: CalendarResponse },
      },
    },
    async (request, reply) => {
      const days = await inRequestTenant(database.db, request, (ctx) => jobCalendar(ctx, request.query));
      // Already JSON (jobCalendar: PostgreSQL writes each job): a string with its type is sent as it
      // is, not through the serializer; the type provider only knows the schema's object form.
      return reply.type('application/json; charset=utf-8').send(`{"data":${days}}` as never);
    },
  );

  app.get(
    '/api/jobs/route',
    {
      schema: {
        tags,
        operationId: 'getJobDayRoute',
        summary: 'A crew’s (or member’s) jobs of one day in a short driving order from the depot',
        description:
          'Give date and exactly one of crewId or assignedTo. The winter routes’ optimizer over the properties’ coordinates, from the organization’s depot setting; stops without coordinates go last. Nothing is stored (POST /api/jobs/route/apply stores it).',
        querystring: DayRouteQuery,
        response: { 200: DayRouteResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => dayRoute(ctx, request.query)),
    }),
  );

  app.post(
    '/api/jobs/route/apply',
    {
      schema: {
        tags,
        operationId: 'applyJobDayRoute',
        summary: 'Store the day route’s order as each job’s routeOrder',
        description: 'The same query as GET /api/jobs/route; answers the stored order.',
        querystring: DayRouteQuery,
        body: EmptyBody,
        response: { 200: DayRouteResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => applyDayRoute(ctx, request.query)),
    }),
  );

  app.get(
    '/api/jobs/:id',
    {
      schema: {
        tags,
        summary: 'One job with its checklist and activity history',
        description: '404 if it does not exist in the active organization.',
        params: IdParams,
        querystring: ExpandOnlyQuery,
        response: { 200: JobDetailResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, async (ctx) => {
          const [job] = await expandParties(ctx, [await getJob(ctx, request.params.id)], expansionsOf(request.query));
          return job as Awaited<ReturnType<typeof getJob>>;
        }),
      };
    },
  );

  app.post(
    '/api/jobs',
    {
      schema: {
        tags,
        summary: 'Schedule a job (emits job.created), or create a draft with draft: true (no event)',
        description: 'A draft can be completed later and published with POST /api/jobs/{id}/publish.',
        body: CreateJobBody,
        response: { 201: JobDetailResponse },
      },
    },
    async (request, reply) => {
      const job = await inRequestTenant(database.db, request, (ctx) => createJob(ctx, request.body));
      return reply.code(201).send({ data: job });
    },
  );

  // PUT is the spec's name; PATCH is accepted too so every partial update has one verb.
  for (const method of ['put', 'patch'] as const) {
    app[method](
      '/api/jobs/:id',
      {
        schema: {
          tags,
          summary: 'Partly update a job; a status change follows the transition table and emits events',
          description:
            'PUT and PATCH behave the same. A transition not in the table is refused with 409 INVALID_STATE and nothing changes. Completing a visit of a schedule billed per visit makes its invoice in the same request (a draft, or sent when the schedule says autoSend): the answer carries its invoiceId.',
          params: IdParams,
          body: UpdateJobBody,
          response: { 200: JobDetailResponse },
        },
      },
      async (request) => {
        return {
          data: await inRequestTenant(database.db, request, (ctx) =>
            flows.updateJobAndBillVisit(ctx, request.params.id, request.body, { baseUrl: config.baseUrl }),
          ),
        };
      },
    );
  }

  app.delete(
    '/api/jobs/:id',
    {
      schema: {
        tags,
        summary: 'Delete a job (not a completed one: cancel it instead to keep the record)',
        description: '409 INVALID_STATE for a completed job.',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => flows.deleteJob(ctx, request.params.id));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/jobs/:id/on-my-way',
    {
      schema: {
        tags,
        summary: 'Text the customer that the crew is on the way (any role, or a crew device token)',
        description:
          'Texts "<Org>: <first name> is on the way" (with the ETA when given) at once, not held by quiet hours, and adds a job activity. The job must be scheduled or in progress (else 409). A customer who cannot be texted (no consent, no valid mobile number, texting off) gets no text: the answer is the message `skipped`, with the reason in errorMessage.',
        params: IdParams,
        body: OnMyWayBody,
        response: { 200: MessageResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) =>
        onMyWay(ctx, twilioDeps(config), request.params.id, request.body.etaMinutes),
      ),
    }),
  );

  app.post(
    '/api/jobs/:id/publish',
    {
      schema: {
        tags,
        summary: 'Publish a draft job: draft → scheduled, emits job.created',
        description: 'The job needs a scheduled date; 409 INVALID_STATE if it is not a draft.',
        params: IdParams,
        body: EmptyBody,
        response: { 200: JobDetailResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) => publishJob(ctx, request.params.id)),
      };
    },
  );

  app.patch(
    '/api/jobs/:id/checklist/:itemId',
    {
      schema: {
        tags,
        operationId: 'updateJobChecklistItem',
        summary: 'Tick or reopen a checklist item (not on completed or canceled jobs)',
        description: 'Records who ticked it and when.',
        params: ChecklistParams,
        body: ChecklistPatchBody,
        response: { 200: JobDetailResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) =>
          setChecklistItem(ctx, request.params.id, request.params.itemId, request.body.completed),
        ),
      };
    },
  );
}
