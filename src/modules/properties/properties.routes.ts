import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { IdParams, NoContent } from '../../platform/schemas.js';
import type { Ctx } from '../../platform/tenancy.js';

import {
  CreatePropertyBody,
  PropertyList,
  PropertyListQuery,
  PropertyResponse,
  UpdatePropertyBody,
} from './properties.schemas.js';
import { createProperty, getProperty, listProperties, updateProperty } from './properties.service.js';

/** The flow (src/flows/delete-referenced.ts) that deletes a property: the rows of other modules naming it let go first. */
export interface PropertyFlows {
  deleteProperty(ctx: Ctx, id: string): Promise<void>;
}

export default async function propertyRoutes(fastify: FastifyInstance, { flows }: { flows: PropertyFlows }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  const tags = ['properties'];

  app.get(
    '/api/properties',
    {
      schema: {
        tags,
        summary: 'List service addresses (newest first), optionally of one customer',
        description: 'Paginated like every list (see the README).',
        querystring: PropertyListQuery,
        response: { 200: PropertyList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) =>
        listProperties(ctx, { customerId: request.query.customerId }, page),
      );
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/properties/:id',
    {
      schema: {
        tags,
        summary: 'One property',
        description: '404 if it does not exist in the active organization.',
        params: IdParams,
        response: { 200: PropertyResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) => getProperty(ctx, request.params.id)),
      };
    },
  );

  app.post(
    '/api/properties',
    {
      schema: {
        tags,
        summary: 'Add a service address to a live customer (400 on customerId otherwise)',
        description: 'A soft-deleted or unknown customer is refused on `customerId`.',
        body: CreatePropertyBody,
        response: { 201: PropertyResponse },
      },
    },
    async (request, reply) => {
      const property = await inRequestTenant(database.db, request, (ctx) => createProperty(ctx, request.body));
      return reply.code(201).send({ data: property });
    },
  );

  app.patch(
    '/api/properties/:id',
    {
      schema: {
        tags,
        summary: 'Update some fields of a property; null clears an optional field',
        description: 'Fields not sent keep their value.',
        params: IdParams,
        body: UpdatePropertyBody,
        response: { 200: PropertyResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) =>
          updateProperty(ctx, request.params.id, request.body),
        ),
      };
    },
  );

  app.delete(
    '/api/properties/:id',
    {
      schema: {
        tags,
        summary: 'Delete a property (409 CONFLICT while other records still reference it)',
        description: 'Jobs and contracts that name it keep it alive.',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => flows.deleteProperty(ctx, request.params.id));
      return reply.code(204).send(null);
    },
  );
}
