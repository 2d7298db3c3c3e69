import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { EmptyBody, IdParams, NoContent } from '../../platform/schemas.js';
import type { Ctx } from '../../platform/tenancy.js';
import type { BillView } from '../bills/bills.service.js';
import {
  BillResponse,
  CreatePoBody,
  PoList,
  PoListQuery,
  PoResponse,
  SentPoResponse,
  UpdatePoBody,
} from './purchase-orders.schemas.js';
import {
  cancelPurchaseOrder,
  createPurchaseOrder,
  deletePurchaseOrder,
  getPurchaseOrder,
  listPurchaseOrders,
  receivePurchaseOrder,
  sendPurchaseOrder,
  updatePurchaseOrder,
} from './purchase-orders.service.js';

/**
 * The flows (src/flows/) these routes start. src/modules/index.ts hands them in, so this
 * module never imports the layer above it.
 */
export interface PurchaseOrderFlows {
  billPurchaseOrder(ctx: Ctx, id: string): Promise<BillView>;
}

/** Every role may order materials; turning an order into a bill is payables work (owner/admin). */
export default async function purchaseOrderRoutes(fastify: FastifyInstance, { flows }: { flows: PurchaseOrderFlows }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  const tags = ['purchase-orders'];

  app.get(
    '/api/purchase-orders',
    {
      schema: {
        tags,
        summary: 'List purchase orders, newest first (filters: status, vendorId, jobId)',
        description: 'Every role may read purchase orders; paginated like every list.',
        querystring: PoListQuery,
        response: { 200: PoList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listPurchaseOrders(ctx, request.query, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/purchase-orders/:id',
    {
      schema: {
        tags,
        summary: 'One purchase order',
        description: 'Every role may read one, with its poNumber (PO-000001), line items and total.',
        params: IdParams,
        response: { 200: PoResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => getPurchaseOrder(ctx, request.params.id)),
    }),
  );

  app.post(
    '/api/purchase-orders',
    {
      schema: {
        tags,
        summary: 'Create a draft purchase order (emits purchase-order.created)',
        description:
          'Every role may order materials; the order starts in draft with the next poNumber. An unknown or inactive vendor, an unknown jobId or an expectedDate before orderDate → 400.',
        body: CreatePoBody,
        response: { 201: PoResponse },
      },
    },
    async (request, reply) => {
      const data = await inRequestTenant(database.db, request, (ctx) => createPurchaseOrder(ctx, request.body));
      return reply.code(201).send({ data });
    },
  );

  app.patch(
    '/api/purchase-orders/:id',
    {
      schema: {
        tags,
        summary: 'Change a draft purchase order (409 once sent)',
        description:
          'Only a draft can be changed; a sent, received or cancelled order → 409 INVALID_STATE. The same checks as on creation apply (400).',
        params: IdParams,
        body: UpdatePoBody,
        response: { 200: PoResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) =>
        updatePurchaseOrder(ctx, request.params.id, request.body),
      ),
    }),
  );

  app.delete(
    '/api/purchase-orders/:id',
    {
      schema: {
        tags,
        summary: 'Delete a draft purchase order (409 otherwise)',
        description: 'Only a draft can be deleted; any other status → 409 INVALID_STATE (cancel it instead).',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => deletePurchaseOrder(ctx, request.params.id));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/purchase-orders/:id/send',
    {
      schema: {
        tags,
        summary: 'draft → sent; mails the vendor when it has an email (emits purchase-order.sent)',
        description:
          'Moves a draft to sent and emails the vendor when it has an email address; any other status → 409 INVALID_STATE. The mail is queued and sent in the background, retried while the mail server refuses.',
        params: IdParams,
        body: EmptyBody,
        response: { 200: SentPoResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => sendPurchaseOrder(ctx, request.params.id)),
    }),
  );

  app.post(
    '/api/purchase-orders/:id/receive',
    {
      schema: {
        tags,
        summary: 'sent → received (emits purchase-order.received)',
        description:
          'Records that the goods arrived; only a sent order can be received, any other status → 409 INVALID_STATE. A received order can then be billed.',
        params: IdParams,
        body: EmptyBody,
        response: { 200: PoResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => receivePurchaseOrder(ctx, request.params.id)),
    }),
  );

  app.post(
    '/api/purchase-orders/:id/cancel',
    {
      schema: {
        tags,
        summary: 'draft | sent → cancelled (emits purchase-order.cancelled)',
        description: 'Cancels a draft or sent order; a received or already cancelled order → 409 INVALID_STATE.',
        params: IdParams,
        body: EmptyBody,
        response: { 200: PoResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => cancelPurchaseOrder(ctx, request.params.id)),
    }),
  );

  app.post(
    '/api/purchase-orders/:id/bill',
    {
      config: { roles: ['owner', 'admin'] },
      schema: {
        tags,
        summary: 'Create a draft bill with a received order’s lines (owner/admin; emits bill.created)',
        description:
          'Owner/admin only. One draft bill per received order, a line per order line (booked to 5100 when the line names equipment, else 5000); an order that is not received, already has a bill or totals 0 → 409 INVALID_STATE.',
        params: IdParams,
        body: EmptyBody,
        response: { 201: BillResponse },
      },
    },
    async (request, reply) => {
      const data = await inRequestTenant(database.db, request, (ctx) =>
        flows.billPurchaseOrder(ctx, request.params.id),
      );
      return reply.code(201).send({ data });
    },
  );
}
