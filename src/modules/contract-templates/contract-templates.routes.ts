import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { IdParams, NoContent } from '../../platform/schemas.js';
import type { Ctx } from '../../platform/tenancy.js';

import {
  CreateTemplateBody,
  TemplateListQuery,
  TemplateListResponse,
  TemplateResponse,
  UpdateTemplateBody,
} from './contract-templates.schemas.js';
import { createTemplate, getTemplate, listTemplates, updateTemplate } from './contract-templates.service.js';

/** The flow (src/flows/delete-referenced.ts) that deletes a contract template: the rows of other modules naming it let go first. */
export interface ContractTemplateFlows {
  deleteContractTemplate(ctx: Ctx, id: string): Promise<void>;
}

export default async function contractTemplateRoutes(
  fastify: FastifyInstance,
  { flows }: { flows: ContractTemplateFlows },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  const tags = ['contract-templates'];

  app.get(
    '/api/contract-templates',
    {
      schema: {
        tags,
        summary: 'List contract templates, newest first',
        description: 'Paginated like every list (see the README).',
        querystring: TemplateListQuery,
        response: { 200: TemplateListResponse },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listTemplates(ctx, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.post(
    '/api/contract-templates',
    {
      schema: {
        tags,
        summary: 'Create a contract template',
        description:
          'The content may use `{{placeholders}}` that are filled in when a contract is created from the template.',
        body: CreateTemplateBody,
        response: { 201: TemplateResponse },
      },
    },
    async (request, reply) => {
      const row = await inRequestTenant(database.db, request, (ctx) => createTemplate(ctx, request.body));
      return reply.code(201).send({ data: row });
    },
  );

  app.get(
    '/api/contract-templates/:id',
    {
      schema: {
        tags,
        summary: 'One contract template',
        description: '404 if it does not exist in the active organization.',
        params: IdParams,
        response: { 200: TemplateResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) => getTemplate(ctx, request.params.id)),
      };
    },
  );

  // PUT is the spec's name; PATCH is accepted too so every partial update has one verb.
  for (const method of ['put', 'patch'] as const) {
    app[method](
      '/api/contract-templates/:id',
      {
        schema: {
          tags,
          summary: 'Partly update a contract template',
          description: 'Only the fields sent change. Contracts already made from it are not touched.',
          params: IdParams,
          body: UpdateTemplateBody,
          response: { 200: TemplateResponse },
        },
      },
      async (request) => {
        return {
          data: await inRequestTenant(database.db, request, (ctx) =>
            updateTemplate(ctx, request.params.id, request.body),
          ),
        };
      },
    );
  }

  app.delete(
    '/api/contract-templates/:id',
    {
      schema: {
        tags,
        summary: 'Delete a contract template (contracts made from it keep their text)',
        description: 'Contracts store their own copy of the content, so deleting the template never changes them.',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => flows.deleteContractTemplate(ctx, request.params.id));
      return reply.code(204).send(null);
    },
  );
}
