import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../../platform/access.js';
import { pageOf, sendPage } from '../../../platform/pagination.js';
import { IdParams } from '../../../platform/schemas.js';
import {
  CreateDepositBody,
  DepositListQuery,
  DepositListResponse,
  DepositResponse,
  ReconciliationQuery,
  ReconciliationResponse,
} from './deposits.schemas.js';
import { createDeposit, getDeposit, listDeposits, reconciliation } from './deposits.service.js';

export default async function depositRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  const tags = ['payments'];

  app.get(
    '/api/payments/deposits',
    {
      schema: {
        tags,
        summary: 'List deposits, newest first (filters: origin, from/to on depositDate)',
        description:
          'Money that reached the bank: cash and check runs of the office (MANUAL) and Stripe payouts (STRIPE_PAYOUT, from payout.paid), each with its payments and difference. Paginated like every list.',
        querystring: DepositListQuery,
        response: { 200: DepositListResponse },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listDeposits(ctx, request.query, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.post(
    '/api/payments/deposits',
    {
      config: { roles: ['owner', 'admin'] },
      schema: {
        tags,
        summary: 'Record a deposit of cash and check payments (owner/admin)',
        description:
          'A payment sits in at most one deposit: one already deposited → 409 CONFLICT, also when two deposits race for it. No payments, a payment listed twice, an unknown or another organization’s payment, a card/ACH payment, a payment refunded in full or a date after today → 400 with nothing written. Deposits group money; they post nothing to the ledger.',
        body: CreateDepositBody,
        response: { 201: DepositResponse },
      },
    },
    async (request, reply) => {
      const data = await inRequestTenant(database.db, request, (ctx) => createDeposit(ctx, request.body));
      return reply.code(201).send({ data });
    },
  );

  app.get(
    '/api/payments/deposits/:id',
    {
      schema: {
        tags,
        summary: 'One deposit with its payments',
        description:
          'amount is what the bank received, paymentsTotal what its payments brought in, difference the gap.',
        params: IdParams,
        response: { 200: DepositResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => getDeposit(ctx, request.params.id)),
    }),
  );

  app.get(
    '/api/payments/reconciliation',
    {
      schema: {
        tags,
        summary: 'Reconciliation report: undeposited payments, deposits with their differences, unmatched payouts',
        description:
          'For from..to (inclusive, organization timezone; both optional): cash/check and Stripe card payments no deposit holds (paymentDate in the period) with their total, the deposits of the period (depositDate) with amount, paymentsTotal and difference, and the Stripe payouts that matched no payment.',
        querystring: ReconciliationQuery,
        response: { 200: ReconciliationResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => reconciliation(ctx, request.query)),
    }),
  );
}
