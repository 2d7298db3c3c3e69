import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { prefersHtml } from '../../platform/accept.js';
import { notFound } from '../../platform/errors.js';
import { PdfResponse, sendPdf } from '../../platform/pdf.js';
import { DateOnly, DateTime, Envelope, Nullable } from '../../platform/schemas.js';
import { inTenant } from '../../platform/tenancy.js';
import { upcomingVisitsOf } from '../jobs/jobs.portal.js';
import { IntentResponse, PortalPayBody } from '../payments/intents/payment-intents.schemas.js';
import { payFromPortal } from '../payments/intents/payment-intents.service.js';
import { stripeDeps } from '../payments/stripe/stripe-client.js';
import type { PortalHandlers } from '../portal-links/portal-links.handlers.js';
import { resolvePortalToken } from '../portal-links/portal-links.service.js';
import { registerPortalPage } from './portal.page.routes.js';

const PortalDocument = Envelope(
  Type.Object({
    type: Type.Union([Type.Literal('invoice'), Type.Literal('estimate'), Type.Literal('contract')]),
    document: Type.Object({}, { additionalProperties: true, description: 'The document in its REST shape' }),
  }),
);
const PortalVisitsResponse = Envelope(
  Type.Array(
    Type.Object(
      {
        id: Type.String(),
        scheduledDate: DateOnly(),
        startTime: Nullable(Type.String({ description: 'HH:mm local' })),
        startsAt: Nullable(DateTime()),
        status: Type.String(),
        services: Type.Array(Type.String()),
      },
      { additionalProperties: false },
    ),
  ),
);
const TokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });
const ActionParams = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 200 }),
  action: Type.String({ minLength: 1, maxLength: 40, description: 'approve | decline (estimates), sign (contracts)' }),
});
const ActionBody = Type.Optional(
  Type.Object(
    { signerName: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Contracts: who signs' })) },
    { additionalProperties: false },
  ),
);

/** Pay calls per link and minute (each may create or change a PaymentIntent at Stripe). */
export const PORTAL_PAY_PER_MINUTE = 10;
const tokenKey = (request: FastifyRequest) => `link:${(request.params as { token?: string }).token ?? ''}`;

/**
 * The customer portal: no session, the token in the emailed link is the credential.
 * Every call runs inside the token's organization, as that organization. The document types
 * it serves are handed in (src/modules/portal.handlers.ts, listed at the top in index.ts).
 */
export default async function portalRoutes(
  fastify: FastifyInstance,
  { handlers: portalHandlers }: { handlers: PortalHandlers },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, config } = app.deps;
  const tags = ['portal'];
  const stripe = stripeDeps(config);
  const meta = (ip: string, ua: string | undefined) => ({ ip, userAgent: ua ?? '' });
  registerPortalPage(fastify, stripe, portalHandlers);

  app.get(
    '/api/portal/:token',
    {
      config: { access: 'public' },
      schema: {
        tags,
        operationId: 'getPortalDocument',
        summary: 'Open a document from a customer link (records the view)',
        description:
          'The token in the emailed link is the only credential. A sent estimate or contract becomes viewed. ' +
          'This is also the link in the mail: a browser (an Accept header preferring text/html over application/json) is answered 303 to the customer page /portal/{token}; any other client (no Accept, */*, application/json) gets this JSON.',
        security: [],
        params: TokenParams,
        response: {
          200: PortalDocument,
          303: Type.Null({ description: 'A browser is sent to the customer page, /portal/{token} (Location)' }),
        },
      },
    },
    async (request, reply) => {
      reply.header('vary', 'Accept');
      if (prefersHtml(request.headers.accept)) {
        return reply.redirect(`/portal/${encodeURIComponent(request.params.token)}`, 303);
      }
      const target = await resolvePortalToken(database.db, request.params.token);
      const handler = portalHandlers[target.documentType];
      if (!handler) throw notFound('Document');
      const actor = { kind: 'portal' as const, id: target.tokenId, role: 'member' as const };
      const document = await inTenant(database.db, target.organizationId, actor, (ctx) =>
        handler.view(ctx, target.documentId, meta(request.ip, request.headers['user-agent'])),
      );
      return { data: { type: target.documentType, document } };
    },
  );

  app.get(
    '/api/portal/:token/visits',
    {
      config: { access: 'public' },
      schema: {
        tags,
        operationId: 'getPortalVisits',
        summary: 'The customer’s upcoming visits (a contract or invoice link), at most 100, soonest first',
        description: 'Visits still to come from today in the organization’s timezone; another link type → 404.',
        security: [],
        params: TokenParams,
        response: { 200: PortalVisitsResponse },
      },
    },
    async (request) => {
      const target = await resolvePortalToken(database.db, request.params.token);
      const actor = { kind: 'portal' as const, id: target.tokenId, role: 'member' as const };
      return {
        data: await inTenant(database.db, target.organizationId, actor, (ctx) =>
          upcomingVisitsOf(ctx, target.documentType, target.documentId),
        ),
      };
    },
  );

  app.get(
    '/api/portal/:token/pdf',
    {
      config: { access: 'public' },
      schema: {
        tags,
        summary: 'Download the linked invoice or estimate as a PDF',
        description:
          "No session: the link's token is the credential. A contract link, an unknown or expired token answer 404.",
        security: [],
        params: TokenParams,
        produces: ['application/pdf'],
        response: { 200: PdfResponse },
      },
    },
    async (request, reply) => {
      const target = await resolvePortalToken(database.db, request.params.token);
      const pdf = portalHandlers[target.documentType]?.pdf;
      if (!pdf) throw notFound('Document');
      const actor = { kind: 'portal' as const, id: target.tokenId, role: 'member' as const };
      const source = await inTenant(database.db, target.organizationId, actor, (ctx) => pdf(ctx, target.documentId));
      return sendPdf(reply, source);
    },
  );

  app.post(
    '/api/portal/:token/pay',
    {
      // Each call may reach Stripe, and the link is all a caller needs: a budget per link, below the per-IP one.
      config: {
        access: 'public',
        rateLimit: { bucket: 'portal-pay', perMinute: PORTAL_PAY_PER_MINUTE, key: tokenKey },
        errors: [503], // Stripe unreachable
      },
      schema: {
        tags,
        summary: 'Pay the linked invoice by card: a Stripe payment intent (amount defaults to the balance)',
        description:
          "No session: the link's token is the credential. Creates a Stripe PaymentIntent as POST /api/payments/intents does (source PORTAL); hand clientSecret to Stripe.js. An invoice has at most one open portal intent: coming back (or several calls at once) for the same amount answers that intent, and another amount changes its amount at Stripe (one PaymentIntent per checkout). " +
          `A link to an estimate or contract, an unknown or expired token → 404; a draft, paid or void invoice → 409; an amount above the balance → 400; another amount while a payment is processing → 409; the organization without Stripe configured → 409; more than ${PORTAL_PAY_PER_MINUTE} calls a minute on one link → 429.`,
        security: [],
        params: TokenParams,
        body: PortalPayBody,
        response: { 201: IntentResponse },
      },
    },
    async (request, reply) => {
      const target = await resolvePortalToken(database.db, request.params.token);
      if (target.documentType !== 'invoice') throw notFound('Invoice');
      const actor = { kind: 'portal' as const, id: target.tokenId, role: 'member' as const };
      const data = await payFromPortal(
        (fn) => inTenant(database.db, target.organizationId, actor, fn),
        stripe,
        target.documentId,
        request.body?.amount,
      );
      return reply.code(201).send({ data });
    },
  );

  app.post(
    '/api/portal/:token/:action',
    {
      config: { access: 'public' },
      schema: {
        tags,
        operationId: 'actOnPortalDocument',
        summary: 'A customer action on the linked document: approve/decline an estimate, sign a contract',
        description:
          "`action` is approve or decline (estimates) or sign (contracts; body with the signer's name). 409 when the document's state does not allow it.",
        security: [],
        params: ActionParams,
        body: ActionBody,
        response: { 200: PortalDocument },
      },
    },
    async (request) => {
      const target = await resolvePortalToken(database.db, request.params.token);
      // The action name is user input: only the handler's own entries count, never Object.prototype's.
      const actions = portalHandlers[target.documentType]?.actions;
      const action =
        actions && Object.hasOwn(actions, request.params.action) ? actions[request.params.action] : undefined;
      if (!action) throw notFound('Action');
      const actor = { kind: 'portal' as const, id: target.tokenId, role: 'member' as const };
      const document = await inTenant(database.db, target.organizationId, actor, (ctx) =>
        action(ctx, target.documentId, request.body ?? {}, meta(request.ip, request.headers['user-agent'])),
      );
      return { data: { type: target.documentType, document } };
    },
  );
}
