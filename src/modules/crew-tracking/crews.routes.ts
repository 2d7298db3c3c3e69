import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { IdParams, NoContent } from '../../platform/schemas.js';
import type { Ctx } from '../../platform/tenancy.js';
import { CreateCrewBody, CrewList, CrewListQuery, CrewResponse, UpdateCrewBody } from './crews.schemas.js';
import { createCrew, getCrew, listCrews, updateCrew } from './crews.service.js';

/** The flow (src/flows/delete-referenced.ts) that deletes a crew: the rows of other modules naming it let go first. */
export interface CrewFlows {
  deleteCrew(ctx: Ctx, id: string): Promise<void>;
}

export async function crewRoutes(fastify: FastifyInstance, flows: CrewFlows) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  const tags = ['crew-tracking'];
  const admin = { roles: ['owner', 'admin'] } as const;

  app.get(
    '/api/crew-tracking/crews',
    {
      schema: {
        tags,
        summary: 'List crews (newest first)',
        description: 'Every role may read crews; paginated like every list.',
        querystring: CrewListQuery,
        response: { 200: CrewList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listCrews(ctx, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.post(
    '/api/crew-tracking/crews',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Create a crew (owner/admin)',
        description:
          'Owner/admin only. name is required; each of memberIds must be a member id (mem_…) of this organization, else 400.',
        body: CreateCrewBody,
        response: { 201: CrewResponse },
      },
    },
    async (request, reply) => {
      const crew = await inRequestTenant(database.db, request, (ctx) => createCrew(ctx, request.body));
      return reply.code(201).send({ data: crew });
    },
  );

  app.get(
    '/api/crew-tracking/crews/:id',
    {
      schema: {
        tags,
        summary: 'One crew',
        description: 'Every role may read a crew, with its memberIds.',
        params: IdParams,
        response: { 200: CrewResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => getCrew(ctx, request.params.id)),
    }),
  );

  app.patch(
    '/api/crew-tracking/crews/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Rename a crew or replace its members (owner/admin)',
        description:
          'Owner/admin only. memberIds replaces the whole list; each must be a member of this organization, else 400.',
        params: IdParams,
        body: UpdateCrewBody,
        response: { 200: CrewResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => updateCrew(ctx, request.params.id, request.body)),
    }),
  );

  app.delete(
    '/api/crew-tracking/crews/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Delete a crew (owner/admin)',
        description: 'Owner/admin only. Deletes the crew; its members stay in the organization.',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => flows.deleteCrew(ctx, request.params.id));
      return reply.code(204).send(null);
    },
  );
}
