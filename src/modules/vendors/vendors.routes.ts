import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { IdParams, NoContent } from '../../platform/schemas.js';

import { CreateVendorBody, UpdateVendorBody, VendorList, VendorListQuery, VendorResponse } from './vendors.schemas.js';
import { createVendor, deleteVendor, getVendor, listVendors, updateVendor } from './vendors.service.js';

export default async function vendorRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  const tags = ['vendors'];

  app.get(
    '/api/vendors',
    {
      schema: {
        tags,
        summary: 'List vendors (newest first), optionally only active or inactive ones',
        description:
          'Every role may read vendors; paginated like every list. An inactive vendor stays listed but cannot be chosen for a new purchase order or bill.',
        querystring: VendorListQuery,
        response: { 200: VendorList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) =>
        listVendors(ctx, { active: request.query.active }, page),
      );
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/vendors/:id',
    {
      schema: {
        tags,
        summary: 'One vendor',
        description: 'Every role may read a vendor; 404 when it is not in this organization.',
        params: IdParams,
        response: { 200: VendorResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) => getVendor(ctx, request.params.id)),
      };
    },
  );

  app.post(
    '/api/vendors',
    {
      schema: {
        tags,
        summary: 'Add a vendor (every role)',
        description:
          'Only name is required; paymentTermsDays defaults from the organization settings and sets the default due date of its bills.',
        body: CreateVendorBody,
        response: { 201: VendorResponse },
      },
    },
    async (request, reply) => {
      const vendor = await inRequestTenant(database.db, request, (ctx) => createVendor(ctx, request.body));
      return reply.code(201).send({ data: vendor });
    },
  );

  app.patch(
    '/api/vendors/:id',
    {
      schema: {
        tags,
        summary: 'Update some fields of a vendor; null clears an optional field',
        description:
          'Every role may update a vendor. Setting active to false keeps its history; an inactive vendor given as vendorId on a new order or bill → 400.',
        params: IdParams,
        body: UpdateVendorBody,
        response: { 200: VendorResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) => updateVendor(ctx, request.params.id, request.body)),
      };
    },
  );

  app.delete(
    '/api/vendors/:id',
    {
      schema: {
        tags,
        summary: 'Delete a vendor (409 CONFLICT once it has purchase orders, bills or payments; deactivate it instead)',
        description:
          'Every role may delete a vendor that has no purchase orders, bills or payments. Otherwise 409 CONFLICT: set active to false instead.',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => deleteVendor(ctx, request.params.id));
      return reply.code(204).send(null);
    },
  );
}
