import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { EmptyBody, IdParams } from '../../platform/schemas.js';
import {
  BillPaymentList,
  BillPaymentListQuery,
  BillPaymentResponse,
  CreateBillPaymentBody,
  FailBillPaymentBody,
} from './bill-payments.schemas.js';
import {
  createBillPayment,
  failBillPayment,
  getBillPayment,
  listBillPayments,
  settleBillPayment,
} from './bill-payments.service.js';

const roles = ['owner', 'admin'] as const;

export default async function billPaymentRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  const tags = ['bill-payments'];

  app.get(
    '/api/bill-payments',
    {
      config: { roles },
      schema: {
        tags,
        summary: 'List bill payments, newest first (filters: vendorId, status)',
        description: 'Owner/admin only; paginated like every list.',
        querystring: BillPaymentListQuery,
        response: { 200: BillPaymentList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listBillPayments(ctx, request.query, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/bill-payments/:id',
    {
      config: { roles },
      schema: {
        tags,
        summary: 'One bill payment with its allocations',
        description: 'Owner/admin only. The payment with its status and the amount it applied to each bill.',
        params: IdParams,
        response: { 200: BillPaymentResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => getBillPayment(ctx, request.params.id)),
    }),
  );

  app.post(
    '/api/bill-payments',
    {
      config: { roles },
      schema: {
        tags,
        summary:
          'Pay open bills of one vendor (scheduled when dated after today, else pending; emits bill_payment.created)',
        description:
          'Owner/admin only. Each allocation must name an open or partially_paid bill of that vendor with an amount no greater than its balance (else 400); it applies at once, bills move to partially_paid or paid (emitting bill.paid) and the payment is booked (Dr 2000, Cr 1000).',
        body: CreateBillPaymentBody,
        response: { 201: BillPaymentResponse },
      },
    },
    async (request, reply) => {
      const data = await inRequestTenant(database.db, request, (ctx) => createBillPayment(ctx, request.body));
      return reply.code(201).send({ data });
    },
  );

  app.post(
    '/api/bill-payments/:id/settle',
    {
      config: { roles },
      schema: {
        tags,
        summary: 'The bank confirmed it: pending → settled (emits bill_payment.settled)',
        description:
          'Owner/admin only. Only a pending payment can be settled; a scheduled payment becomes pending on its date, and any other status → 409 INVALID_STATE.',
        params: IdParams,
        body: EmptyBody,
        response: { 200: BillPaymentResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => settleBillPayment(ctx, request.params.id)),
    }),
  );

  app.post(
    '/api/bill-payments/:id/fail',
    {
      config: { roles },
      schema: {
        tags,
        summary:
          'Failed or returned (from scheduled, pending or settled): allocations reversed, bills reopen (emits bill_payment.failed)',
        description:
          'Owner/admin only; a reason is required. Every allocation and its ledger entry are reversed and paid bills reopen; an already failed payment → 409 INVALID_STATE.',
        params: IdParams,
        body: FailBillPaymentBody,
        response: { 200: BillPaymentResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) =>
        failBillPayment(ctx, request.params.id, request.body.reason),
      ),
    }),
  );
}
