import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../../platform/access.js';
import { pageOf, sendPage } from '../../../platform/pagination.js';
import { EmptyBody, IdParams } from '../../../platform/schemas.js';
import { transitionTable } from '../../../platform/state-machine.js';
import type { StripeDeps } from '../stripe/stripe-client.js';
import { CreateIntentBody, IntentListQuery, IntentListResponse, IntentResponse } from './payment-intents.schemas.js';
import { cancelIntent, createIntent, getIntent, listIntents, type TenantRunner } from './payment-intents.service.js';
import { intentMachine } from './payment-intents.states.js';

export default async function paymentIntentRoutes(fastify: FastifyInstance, opts: { stripe: StripeDeps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  const tags = ['payments'];
  const runner =
    (request: Parameters<typeof inRequestTenant>[1]): TenantRunner =>
    (fn) =>
      inRequestTenant(database.db, request, fn);

  app.get(
    '/api/payments/intents',
    {
      config: { errors: [503] }, // Stripe unreachable
      schema: {
        tags,
        summary: 'List payment intents, newest first (filters: invoiceId, status)',
        description: 'Card payments started through Stripe, from the API or the portal. Paginated like every list.',
        querystring: IntentListQuery,
        response: { 200: IntentListResponse },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listIntents(ctx, request.query, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.post(
    '/api/payments/intents',
    {
      config: { errors: [503] }, // Stripe unreachable
      schema: {
        tags,
        summary: 'Start a card payment of an invoice: a Stripe PaymentIntent (amount defaults to the balance)',
        description:
          "Creates the PaymentIntent at Stripe with the organization's secret key (settings stripeSecretKey), in the organization's currency, with metadata organizationId, invoiceId, invoiceNumber and intentId. " +
          'Hand clientSecret to Stripe.js in the browser; the payment is recorded when Stripe sends payment_intent.succeeded to POST /api/payments/stripe/{organizationId}. ' +
          'Without Stripe configured → 409 INVALID_STATE saying how to configure it. A draft, paid, void or written-off invoice → 409; an amount above the balance or ≤ 0 → 400; an unknown invoice → 400. Stripe unreachable → 503 with nothing recorded.',
        body: CreateIntentBody,
        response: { 201: IntentResponse },
      },
    },
    async (request, reply) => {
      const data = await createIntent(runner(request), opts.stripe, request.body);
      return reply.code(201).send({ data });
    },
  );

  app.get(
    '/api/payments/intents/:id',
    {
      schema: {
        tags,
        summary: 'One payment intent',
        description: `The intent with its status, which Stripe's events move:\n\n${transitionTable(intentMachine)}`,
        params: IdParams,
        response: { 200: IntentResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => getIntent(ctx, request.params.id)),
    }),
  );

  app.post(
    '/api/payments/intents/:id/cancel',
    {
      config: { roles: ['owner', 'admin'], errors: [503] }, // Stripe unreachable
      schema: {
        tags,
        summary: 'Cancel a payment intent at Stripe and here (owner/admin)',
        description:
          'Only an intent waiting for payment (requires_payment_method) or processing; a succeeded or canceled one → 409 INVALID_STATE. Stripe is asked first, so the customer can no longer pay it.',
        params: IdParams,
        body: EmptyBody,
        response: { 200: IntentResponse },
      },
    },
    async (request) => ({ data: await cancelIntent(runner(request), opts.stripe, request.params.id) }),
  );
}
