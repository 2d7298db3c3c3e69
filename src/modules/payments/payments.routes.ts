import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { Envelope, IdParams } from '../../platform/schemas.js';
import { type Ctx, inTenant, systemActor } from '../../platform/tenancy.js';
import depositRoutes from './deposits/deposits.routes.js';
import paymentIntentRoutes from './intents/payment-intents.routes.js';
import {
  PaymentListQuery,
  PaymentListResponse,
  PaymentResponse,
  RefundBody,
  RefundResponse,
  StripeAck,
  StripeParams,
} from './payments.schemas.js';
import { getPayment, listPayments, type RecordedRefund } from './payments.service.js';
import { stripeSecretOfOrganization, verifiedStripeEvent } from './stripe/payments.stripe.js';
import { type StripeDeps, stripeDeps } from './stripe/stripe-client.js';
import { applyStripeEvent, HANDLED_STRIPE_EVENTS } from './stripe/stripe-events.js';

/**
 * The flows (src/flows/) these routes start. src/modules/index.ts hands them in, so this
 * module never imports the layer above it.
 */
export interface PaymentFlows {
  refundPayment(ctx: Ctx, paymentId: string, body: { amount?: number; reason?: string }): Promise<RecordedRefund>;
}

export default async function paymentRoutes(fastify: FastifyInstance, { flows }: { flows: PaymentFlows }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, config } = app.deps;
  const tags = ['payments'];

  app.get(
    '/api/payments',
    {
      schema: {
        tags,
        summary: 'List payments, newest first (filters: customerId, invoiceId, method, status, from/to, unapplied)',
        description:
          'Every payment however it was recorded (the office through POST /api/invoices/{id}/payments, or Stripe). unapplied=true lists payments that carry money beyond the invoice balance (a processor overpayment, or a payment on a void invoice) for the office to refund or apply. Paginated like every list.',
        querystring: PaymentListQuery,
        response: { 200: PaymentListResponse },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listPayments(ctx, request.query, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/payments/:id',
    {
      schema: {
        tags,
        summary: 'One payment with its refunds',
        description:
          'The payment with refundedAmount, unappliedAmount, status (succeeded, partially_refunded, refunded) and every refund with its origin (API or STRIPE_DASHBOARD).',
        params: IdParams,
        response: { 200: PaymentResponse },
      },
    },
    async (request) => {
      return { data: await inRequestTenant(database.db, request, (ctx) => getPayment(ctx, request.params.id)) };
    },
  );

  app.post(
    '/api/payments/:id/refunds',
    {
      config: { roles: ['owner', 'admin'] },
      schema: {
        tags,
        summary:
          'Refund a payment, partly or in full (owner/admin; emits payment.refunded, and invoice.status_changed when the invoice reopens)',
        description:
          'Without amount, refunds the whole refundable rest. Zero, negative or more than the refundable rest is 400 with nothing written; concurrent refunds never exceed the payment. Money is taken from the unapplied excess first, then from the invoice, whose amountPaid, balance and status follow (paid becomes partially_paid, or sent/overdue when nothing stays paid). Records the refund here only: issue the card refund at the processor too.',
        params: IdParams,
        body: RefundBody,
        response: { 201: RefundResponse },
      },
    },
    async (request, reply) => {
      const data = await inRequestTenant(database.db, request, (ctx) =>
        flows.refundPayment(ctx, request.params.id, request.body ?? {}),
      );
      return reply.code(201).send({ data });
    },
  );

  const stripe = stripeDeps(config);
  await app.register(paymentIntentRoutes, { stripe });
  await app.register(depositRoutes);
  await app.register(stripeEventRoute, { stripe });
}

/**
 * Stripe's events, in their own encapsulated plugin: the signature covers the exact
 * bytes Stripe sent, so this one route keeps the body as a raw string (its own
 * content-type parser); JSON handling everywhere else is untouched.
 */
async function stripeEventRoute(fastify: FastifyInstance, opts: { stripe: StripeDeps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    done(null, body.toString());
  });

  app.post(
    '/api/payments/stripe/:organizationId',
    {
      // Stripe holds no credential of ours: the signature is the authentication.
      config: { access: 'public' },
      schema: {
        tags: ['payments'],
        summary:
          'Stripe events in (no session; Stripe-Signature checked against settings stripeWebhookSecret, 300 s tolerance)',
        description:
          'Point a Stripe webhook endpoint at this URL. The body is the Stripe Event JSON exactly as Stripe sent it. ' +
          `Handled (one handler per type): ${HANDLED_STRIPE_EVENTS.join(', ')}. ` +
          'payment_intent.succeeded records the payment once and marks the payment intent succeeded, whatever order events arrive in; processing, payment_failed and canceled move the intent; payout.paid records a deposit and matches the card payments of the payout (Stripe is asked outside any transaction); payout.failed (a returned payout) removes it and is remembered, so a later payout.paid of that payout records nothing. ' +
          'A bad or stale signature, a currency other than the organization’s, a missing or unknown metadata.invoiceId → 400 with nothing written. ' +
          'Replays answer 200 with outcome duplicate; other event types 200 with outcome ignored. ' +
          'A refund whose payment has not arrived yet → 409 (Stripe retries it).',
        security: [],
        params: StripeParams,
        response: { 200: Envelope(StripeAck) },
      },
    },
    async (request) => {
      const { organizationId } = request.params;
      const secret = await stripeSecretOfOrganization(database.db, opts.stripe.box, organizationId);
      const raw = typeof request.body === 'string' ? request.body : '';
      const signature = request.headers['stripe-signature'];
      const event = verifiedStripeEvent(raw, Array.isArray(signature) ? signature[0] : signature, secret);
      const outcome = await applyStripeEvent(
        event,
        (fn) => inTenant(database.db, organizationId, systemActor('stripe'), fn),
        opts.stripe,
      );
      return { data: { received: true as const, outcome } };
    },
  );
}
