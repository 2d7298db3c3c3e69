import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { IdParams, NoContent } from '../../platform/schemas.js';
import type { Ctx } from '../../platform/tenancy.js';

import {
  CreateServiceBody,
  RepriceServiceBody,
  type RepriceServiceInput,
  RepriceServiceResponse,
  ServiceList,
  ServiceListQuery,
  ServiceResponse,
  UpdateServiceBody,
} from './services.schemas.js';
import { createService, getService, listServices, updateService } from './services.service.js';

/** The flow (src/flows/delete-referenced.ts) that deletes a service: the rows of other modules naming it let go first. */
export interface ServiceFlows {
  deleteService(ctx: Ctx, id: string): Promise<void>;
  /** src/flows/reprice-service.ts: the catalog price, carried to the schedules that use it. */
  repriceService(
    ctx: Ctx,
    id: string,
    input: RepriceServiceInput,
  ): Promise<Static<typeof RepriceServiceResponse>['data']>;
}

export default async function serviceRoutes(fastify: FastifyInstance, { flows }: { flows: ServiceFlows }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  const tags = ['services'];

  app.get(
    '/api/services',
    {
      schema: {
        tags,
        summary: 'List catalog services (newest first), optionally only active or inactive ones',
        description: 'Paginated like every list (see the README).',
        querystring: ServiceListQuery,
        response: { 200: ServiceList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) =>
        listServices(ctx, { active: request.query.active }, page),
      );
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/services/:id',
    {
      schema: {
        tags,
        summary: 'One service',
        description: '404 if it does not exist in the active organization.',
        params: IdParams,
        response: { 200: ServiceResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) => getService(ctx, request.params.id)),
      };
    },
  );

  app.post(
    '/api/services',
    {
      schema: {
        tags,
        summary: 'Add a service to the catalog',
        description: 'A catalog item with a default unit price that line items can reference.',
        body: CreateServiceBody,
        response: { 201: ServiceResponse },
      },
    },
    async (request, reply) => {
      const service = await inRequestTenant(database.db, request, (ctx) => createService(ctx, request.body));
      return reply.code(201).send({ data: service });
    },
  );

  app.patch(
    '/api/services/:id',
    {
      schema: {
        tags,
        summary: 'Update some fields of a service; null clears an optional field',
        description: 'Existing line items keep the price they were written with.',
        params: IdParams,
        body: UpdateServiceBody,
        response: { 200: ServiceResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) => updateService(ctx, request.params.id, request.body)),
      };
    },
  );

  app.post(
    '/api/services/:id/reprice',
    {
      schema: {
        tags,
        summary: 'Change a service’s price and carry it to the schedules that use it, from a date',
        description:
          'The catalog price changes at once (lines written from now on). Every active or paused schedule with a line naming the service takes the new price on those lines, and its visits already made, dated on or after `from`, still scheduled, not invoiced and not edited one by one, are rewritten with it; earlier, started, completed, invoiced and hand-edited visits, one-off jobs, invoices and estimates keep their price. `from` (default today) runs from today to the end of the visit horizon. The answer lists each schedule repriced with its lines’ old and new prices and how many visits changed; `dryRun: true` answers the same and writes nothing. 404 for a service of another organization, 409 INVALID_STATE for an inactive one. No event: the catalog has none for services or schedules, and rewritten visits emit none, as a schedule PATCH.',
        params: IdParams,
        body: RepriceServiceBody,
        response: { 200: RepriceServiceResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) =>
        flows.repriceService(ctx, request.params.id, request.body),
      ),
    }),
  );

  app.delete(
    '/api/services/:id',
    {
      schema: {
        tags,
        summary:
          'Delete a service from the catalog (409 CONFLICT while line items still reference it; deactivate it instead)',
        description: 'Set `active: false` to hide it from new documents instead.',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => flows.deleteService(ctx, request.params.id));
      return reply.code(204).send(null);
    },
  );
}
