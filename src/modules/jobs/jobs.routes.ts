import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { EmptyBody, IdParams, NoContent } from '../../platform/schemas.js';

import {
  CalendarQuery,
  CalendarResponse,
  ChecklistParams,
  ChecklistPatchBody,
  CreateJobBody,
  JobDetailResponse,
  JobListQuery,
  JobListResponse,
  UpdateJobBody,
} from './jobs.schemas.js';
import {
  createJob,
  deleteJob,
  getJob,
  jobCalendar,
  listJobs,
  publishJob,
  setChecklistItem,
  updateJob,
} from './jobs.service.js';

export default async function jobRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  const tags = ['jobs'];

  app.get(
    '/api/jobs',
    {
      schema: {
        tags,
        summary: 'List jobs, ordered by scheduledDate (then createdAt, id)',
        querystring: JobListQuery,
        response: { 200: JobListResponse },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listJobs(ctx, request.query, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/jobs/calendar',
    {
      schema: {
        tags,
        summary: 'Jobs grouped by scheduled date (range required, at most 92 days)',
        querystring: CalendarQuery,
        response: { 200: CalendarResponse },
      },
    },
    async (request) => {
      return { data: await inRequestTenant(database.db, request, (ctx) => jobCalendar(ctx, request.query)) };
    },
  );

  app.get(
    '/api/jobs/:id',
    {
      schema: {
        tags,
        summary: 'One job with its checklist and activity history',
        params: IdParams,
        response: { 200: JobDetailResponse },
      },
    },
    async (request) => {
      return { data: await inRequestTenant(database.db, request, (ctx) => getJob(ctx, request.params.id)) };
    },
  );

  app.post(
    '/api/jobs',
    {
      schema: {
        tags,
        summary: 'Schedule a job (emits job.created), or create a draft with draft: true (no event)',
        body: CreateJobBody,
        response: { 201: JobDetailResponse },
      },
    },
    async (request, reply) => {
      const job = await inRequestTenant(database.db, request, (ctx) => createJob(ctx, request.body));
      return reply.code(201).send({ data: job });
    },
  );

  app.put(
    '/api/jobs/:id',
    {
      schema: {
        tags,
        summary: 'Partly update a job; a status change follows the transition table and emits events',
        params: IdParams,
        body: UpdateJobBody,
        response: { 200: JobDetailResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) => updateJob(ctx, request.params.id, request.body)),
      };
    },
  );

  app.delete(
    '/api/jobs/:id',
    {
      schema: {
        tags,
        summary: 'Delete a job (not a completed one: cancel it instead to keep the record)',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => deleteJob(ctx, request.params.id));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/jobs/:id/publish',
    {
      schema: {
        tags,
        summary: 'Publish a draft job: draft → scheduled, emits job.created',
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
        summary: 'Tick or reopen a checklist item (not on completed or canceled jobs)',
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
