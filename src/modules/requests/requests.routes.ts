import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { IdParams } from '../../platform/schemas.js';
import type { Ctx } from '../../platform/tenancy.js';
import publicRequestRoutes from './requests.public.routes.js';
import {
  ConvertRequestBody,
  type ConvertRequestInput,
  DeclineRequestBody,
  RequestList,
  RequestListQuery,
  RequestResponse,
} from './requests.schemas.js';
import {
  archiveRequest,
  declineRequest,
  getRequest,
  listRequests,
  type RequestDetailView,
} from './requests.service.js';

/** What the routes need from src/flows/ (handed in by src/modules/index.ts; a module never imports a flow). */
export interface RequestFlows {
  convertRequest(ctx: Ctx, id: string, input: ConvertRequestInput): Promise<RequestDetailView>;
}

/** Staff side of requests from the public (operations.md §12), and the public routes in their own scope. */
export default async function requestRoutes(fastify: FastifyInstance, { flows }: { flows: RequestFlows }) {
  await fastify.register(publicRequestRoutes);
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  const tags = ['requests'];

  app.get(
    '/api/requests',
    {
      schema: {
        tags,
        summary: 'List requests from the public booking form (newest first), optionally by status',
        description: 'Every role may read requests; paginated like every list.',
        querystring: RequestListQuery,
        response: { 200: RequestList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) =>
        listRequests(ctx, { status: request.query.status }, page),
      );
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/requests/:id',
    {
      schema: {
        tags,
        summary: 'One request, with duplicateOf and matchedCustomerId',
        description:
          'duplicateOf: the latest earlier request (last 30 days) from the same email (any case) or phone (same digits); matchedCustomerId: the oldest live customer with that email or phone. 404 when it is not in this organization.',
        params: IdParams,
        response: { 200: RequestResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => getRequest(ctx, request.params.id)),
    }),
  );

  app.post(
    '/api/requests/:id/convert',
    {
      schema: {
        tags,
        summary: 'Convert a new request to a draft estimate or a job (409 INVALID_STATE unless new)',
        description:
          'The customer is customerId, else the customer the request matches (same email or phone), else a new customer with a property at the request’s address. ' +
          'to: estimate → a draft estimate with a line per requested service (at its catalog price) and the description as notes; to: job → a job on scheduledDate (default the first preferred date, else today) with the requested services. ' +
          'The request becomes converted with customerId and estimateId or jobId; request.converted is emitted. Converting twice → 409.',
        params: IdParams,
        body: ConvertRequestBody,
        response: { 200: RequestResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) =>
        flows.convertRequest(ctx, request.params.id, request.body),
      ),
    }),
  );

  app.post(
    '/api/requests/:id/decline',
    {
      schema: {
        tags,
        summary: 'Decline a new request (409 INVALID_STATE unless new); request.declined',
        description: 'reason is kept on the request (staff only; nothing is sent to the requester).',
        params: IdParams,
        body: DeclineRequestBody,
        response: { 200: RequestResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) =>
        declineRequest(ctx, request.params.id, request.body.reason),
      ),
    }),
  );

  app.post(
    '/api/requests/:id/archive',
    {
      schema: {
        tags,
        summary: 'Archive a request (any but an archived one), out of the new list',
        description: '409 INVALID_STATE when it is archived already.',
        params: IdParams,
        response: { 200: RequestResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => archiveRequest(ctx, request.params.id)),
    }),
  );
}
