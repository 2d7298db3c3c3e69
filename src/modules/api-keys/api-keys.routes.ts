import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { tenantOf } from '../../platform/access.js';
import { IdParams, NoContent } from '../../platform/schemas.js';
import { inTenant } from '../../platform/tenancy.js';
import { ApiKeyList, CreateApiKeyBody, CreatedApiKeyResponse } from './api-keys.schemas.js';
import { createApiKey, listApiKeys, revokeApiKey } from './api-keys.service.js';

export default async function apiKeyRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, resolver } = app.deps;
  const config = { roles: ['owner', 'admin'], feature: 'apiAccess' } as const;
  const tags = ['api-keys'];

  app.post(
    '/api/api-keys',
    {
      config,
      schema: {
        tags,
        summary: 'Create an API key (shown once)',
        body: CreateApiKeyBody,
        response: { 201: CreatedApiKeyResponse },
      },
    },
    async (request, reply) => {
      const t = tenantOf(request);
      const key = await inTenant(database.db, t.organizationId, t.actor, (ctx) => createApiKey(ctx, request.body));
      return reply.code(201).send({ data: key });
    },
  );

  app.get(
    '/api/api-keys',
    { config, schema: { tags, summary: 'List active API keys (no secrets)', response: { 200: ApiKeyList } } },
    async (request) => {
      const t = tenantOf(request);
      return { data: await inTenant(database.db, t.organizationId, t.actor, listApiKeys) };
    },
  );

  app.delete(
    '/api/api-keys/:id',
    {
      config,
      schema: { tags, summary: 'Revoke an API key at once', params: IdParams, response: { 204: NoContent } },
    },
    async (request, reply) => {
      const t = tenantOf(request);
      await inTenant(database.db, t.organizationId, t.actor, (ctx) => revokeApiKey(ctx, request.params.id));
      resolver.invalidate();
      return reply.code(204).send(null);
    },
  );
}
