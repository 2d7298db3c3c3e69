import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { IdParams, NoContent } from '../../platform/schemas.js';

import { ApiKeyList, ApiKeyListQuery, CreateApiKeyBody, CreatedApiKeyResponse } from './api-keys.schemas.js';
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
        description:
          'Owner/admin. The secret (`sk_…`) is in the response only; store it then. Send it as `Authorization: Bearer <key>` or `X-API-Key`. API keys need the Business plan.',
        body: CreateApiKeyBody,
        response: { 201: CreatedApiKeyResponse },
      },
    },
    async (request, reply) => {
      const key = await inRequestTenant(database.db, request, (ctx) => createApiKey(ctx, request.body));
      return reply.code(201).send({ data: key });
    },
  );

  app.get(
    '/api/api-keys',
    {
      config,
      schema: {
        tags,
        summary: 'List active API keys (no secrets), newest first',
        description: 'Revoked keys are not listed. Each key shows its prefix, role and last use, never the secret.',
        querystring: ApiKeyListQuery,
        response: { 200: ApiKeyList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listApiKeys(ctx, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.delete(
    '/api/api-keys/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Revoke an API key at once',
        description: 'Owner/admin. The key stops working in every API process before this request answers.',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => revokeApiKey(ctx, request.params.id));
      resolver.invalidate();
      return reply.code(204).send(null);
    },
  );
}
