import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { IdParams, NoContent } from '../../platform/schemas.js';
import { clockIn, clockOut } from './clock.service.js';
import {
  ClockInBody,
  ClockOutBody,
  TimeEntryList,
  TimeEntryListQuery,
  TimeEntryResponse,
  TimesheetQuery,
  TimesheetResponse,
  UpdateTimeEntryBody,
} from './time-entries.schemas.js';
import { deleteTimeEntry, getTimeEntry, listTimeEntries, updateTimeEntry } from './time-entries.service.js';
import { timesheets } from './timesheets.service.js';

export async function timeRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  const tags = ['crew-tracking'];
  const admin = { roles: ['owner', 'admin'] } as const;

  app.post(
    '/api/crew-tracking/clock-in',
    {
      schema: {
        tags,
        summary: 'Clock in (one open entry per member: a second clock-in → 409 CONFLICT)',
        description:
          'memberId defaults to the caller; clocking in another member needs owner/admin (403). A member who already has an open entry → 409 CONFLICT; type is work (default) or drive.',
        body: ClockInBody,
        response: { 201: TimeEntryResponse },
      },
    },
    async (request, reply) => {
      const entry = await inRequestTenant(database.db, request, (ctx) => clockIn(ctx, request.body));
      return reply.code(201).send({ data: entry });
    },
  );

  app.post(
    '/api/crew-tracking/clock-out',
    {
      schema: {
        tags,
        summary: 'Clock out: closes the open entry; a work entry emits time_entry.completed, a drive entry nothing',
        description:
          'memberId defaults to the caller; another member needs owner/admin (403). No open entry → 409 INVALID_STATE; at before the start, or mileage on a work entry → 400.',
        body: ClockOutBody,
        response: { 200: TimeEntryResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => clockOut(ctx, request.body)),
    }),
  );

  app.get(
    '/api/crew-tracking/time-entries',
    {
      schema: {
        tags,
        summary: 'List time entries, newest start first (filters memberId, jobId, type, from/to on startedAt)',
        description: 'Paginated like every list; from and to filter startedAt.',
        querystring: TimeEntryListQuery,
        response: { 200: TimeEntryList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listTimeEntries(ctx, request.query, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/crew-tracking/time-entries/:id',
    {
      schema: {
        tags,
        summary: 'One time entry with its edits',
        description: 'edits lists every correction made to the entry, with who made it and when.',
        params: IdParams,
        response: { 200: TimeEntryResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => getTimeEntry(ctx, request.params.id)),
    }),
  );

  app.patch(
    '/api/crew-tracking/time-entries/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Correct a time entry (owner/admin); each change is kept in edits with who and when',
        description:
          'Owner/admin only. Each change is appended to edits as {at, actorId, changes}; an end before the start, or mileage on a work entry → 400.',
        params: IdParams,
        body: UpdateTimeEntryBody,
        response: { 200: TimeEntryResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => updateTimeEntry(ctx, request.params.id, request.body)),
    }),
  );

  app.delete(
    '/api/crew-tracking/time-entries/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Delete a time entry (owner/admin)',
        description: 'Owner/admin only. The entry no longer counts in timesheets.',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => deleteTimeEntry(ctx, request.params.id));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/crew-tracking/timesheets',
    {
      schema: {
        tags,
        summary: 'Minutes and mileage per member and day in the organization timezone (at most 92 days)',
        description:
          'from and to are inclusive dates at most 92 days apart; from after to or a longer range → 400. Only days with time are returned; an entry crossing midnight counts on both days, mileage on the day the drive started.',
        querystring: TimesheetQuery,
        response: { 200: TimesheetResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => timesheets(ctx, request.query)),
    }),
  );
}
