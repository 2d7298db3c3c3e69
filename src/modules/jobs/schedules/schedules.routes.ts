import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../../platform/access.js';
import { pageOf, sendPage } from '../../../platform/pagination.js';
import { EmptyBody, IdParams } from '../../../platform/schemas.js';
import {
  CreateScheduleBody,
  EndScheduleBody,
  ScheduleChangeResponse,
  ScheduleListQuery,
  ScheduleListResponse,
  ScheduleResponse,
  SkipBody,
  SkipResponse,
  UpdateScheduleBody,
} from './schedules.schemas.js';
import {
  createSchedule,
  endSchedule,
  getSchedule,
  listSchedules,
  pauseSchedule,
  resumeSchedule,
  skipOccurrence,
  updateSchedule,
} from './schedules.service.js';

/** Recurring visit schedules at /api/jobs/schedules (operations.md §9). */
export default async function scheduleRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  const tags = ['jobs'];

  app.get(
    '/api/jobs/schedules',
    {
      schema: {
        tags,
        operationId: 'listJobSchedules',
        summary: 'List recurring schedules, newest first',
        description: 'Filter by status, customer or contract. Paginated like every list (see the README).',
        querystring: ScheduleListQuery,
        response: { 200: ScheduleListResponse },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listSchedules(ctx, request.query, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/jobs/schedules/:id',
    {
      schema: {
        tags,
        operationId: 'getJobSchedule',
        summary: 'One schedule with its next 10 occurrence dates',
        description: '404 if it does not exist in the active organization.',
        params: IdParams,
        response: { 200: ScheduleResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => getSchedule(ctx, request.params.id)),
    }),
  );

  app.post(
    '/api/jobs/schedules',
    {
      schema: {
        tags,
        operationId: 'createJobSchedule',
        summary: 'Create a recurring schedule; its visits up to the horizon are made at once (job.created each)',
        description:
          'Occurrences are calendar dates in the organization’s timezone from startDate (DTSTART) to endDate. A schedule with contractId stays paused until the contract is active.',
        body: CreateScheduleBody,
        response: { 201: ScheduleResponse },
      },
    },
    async (request, reply) => {
      const schedule = await inRequestTenant(database.db, request, (ctx) => createSchedule(ctx, request.body));
      return reply.code(201).send({ data: schedule });
    },
  );

  app.patch(
    '/api/jobs/schedules/:id',
    {
      schema: {
        tags,
        operationId: 'updateJobSchedule',
        summary: 'Change a schedule forward; answers how many visits were updated, added and removed',
        description:
          'Only visits still scheduled, from today on, not invoiced and not edited one by one change; removed visits are canceled (job.cancelled).',
        params: IdParams,
        body: UpdateScheduleBody,
        response: { 200: ScheduleChangeResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => updateSchedule(ctx, request.params.id, request.body)),
    }),
  );

  const actions = [
    ['pause', 'Pause: active → paused; the not-started visits from today on are canceled', pauseSchedule],
    ['resume', 'Resume: paused → active; the visits up to the horizon are made again', resumeSchedule],
  ] as const;
  for (const [action, summary, run] of actions) {
    app.post(
      `/api/jobs/schedules/:id/${action}`,
      {
        schema: {
          tags,
          operationId: `${action}JobSchedule`,
          summary,
          description: '409 INVALID_STATE when the schedule is not in a state that allows it.',
          params: IdParams,
          body: EmptyBody,
          response: { 200: ScheduleChangeResponse },
        },
      },
      async (request) => ({
        data: await inRequestTenant(database.db, request, (ctx) => run(ctx, request.params.id)),
      }),
    );
  }

  app.post(
    '/api/jobs/schedules/:id/end',
    {
      schema: {
        tags,
        operationId: 'endJobSchedule',
        summary: 'End a schedule on endDate (default today); later not-started visits are canceled',
        description:
          'active or paused → ended (final). Allowed at any time: a schedule whose first visit is still ahead (endDate before startDate or before its first occurrence) ends with no visit.',
        params: IdParams,
        body: EndScheduleBody,
        response: { 200: ScheduleChangeResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) =>
        endSchedule(ctx, request.params.id, request.body ?? null),
      ),
    }),
  );

  app.post(
    '/api/jobs/schedules/:id/skip',
    {
      schema: {
        tags,
        operationId: 'skipJobScheduleOccurrence',
        summary: 'Skip one occurrence: its visit is canceled, or it is never made',
        description: 'A date that is not an occurrence → 400. Answers the canceled visit, or {date, skipped: true}.',
        params: IdParams,
        body: SkipBody,
        response: { 200: SkipResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => skipOccurrence(ctx, request.params.id, request.body)),
    }),
  );
}
