import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../../platform/access.js';
import { IdParams } from '../../platform/schemas.js';
import { CreateOrganizationBody, OrganizationList, OrganizationResponse } from './organizations.schemas.js';
import { activateOrganization, createOrganization, listOrganizations } from './organizations.service.js';

export default async function organizationRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, config, resolver } = app.deps;
  const tags = ['organizations'];

  app.post(
    '/api/organizations',
    {
      config: { access: 'user' },
      schema: {
        tags,
        summary: 'Create an organization; the caller becomes its owner and it becomes active',
        description: 'The new organization is on the default plan (DEFAULT_PLAN).',
        body: CreateOrganizationBody,
        response: { 201: OrganizationResponse },
      },
    },
    async (request, reply) => {
      const org = await createOrganization(database.db, {
        userId: userOf(request),
        sessionId: request.principal?.sessionId,
        name: request.body.name,
        timezone: request.body.timezone,
        plan: config.defaultPlan,
      });
      resolver.invalidate();
      return reply.code(201).send({ data: org });
    },
  );

  app.get(
    '/api/organizations',
    {
      config: { access: 'user' },
      schema: {
        tags,
        summary: "The caller's organizations",
        description: 'Every organization the signed-in user is a member of, with their role.',
        response: { 200: OrganizationList },
      },
    },
    async (request) => ({
      data: await listOrganizations(database.db, userOf(request), request.principal?.organizationId),
    }),
  );

  app.post(
    '/api/organizations/:id/activate',
    {
      config: { access: 'user' },
      schema: {
        tags,
        summary: "Switch the session's active organization",
        description: 'The caller must be a member (404 otherwise). Tenant routes act on the active organization.',
        params: IdParams,
        response: { 200: OrganizationResponse },
      },
    },
    async (request) => {
      const org = await activateOrganization(
        database.db,
        userOf(request),
        request.principal?.sessionId as string,
        request.params.id,
      );
      resolver.invalidate();
      return { data: org };
    },
  );
}
