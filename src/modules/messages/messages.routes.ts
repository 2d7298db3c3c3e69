import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { inRequestTenant } from '../../platform/access.js';
import { AppError, notFound } from '../../platform/errors.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { IdParams, NoContent } from '../../platform/schemas.js';
import { inTenant, systemActor } from '../../platform/tenancy.js';
import { getOrgSettings } from '../settings/settings.service.js';
import { applyStatusCallback, receiveInbound, type TwilioForm } from './messages.callbacks.js';
import {
  ConversationQuery,
  MessageList,
  MessageListQuery,
  MessageResponse,
  SendMessageBody,
} from './messages.schemas.js';
import { customerConversation, getMessage, listMessages, sendManualText } from './messages.service.js';
import {
  emptyTwiml,
  type TwilioDeps,
  twilioCredentials,
  twilioDeps,
  validateTwilioRequest,
} from './messages.twilio.js';

export default async function messageRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, config } = app.deps;
  const deps = twilioDeps(config);
  const tags = ['messages'];

  app.post(
    '/api/messages',
    {
      schema: {
        tags,
        summary: 'Text a customer (any role): 201 queued, sent by the worker through Twilio',
        description:
          'Needs settings smsEnabled, Twilio configured (twilioAccountSid, twilioAuthToken, smsFrom), the customer’s phoneE164 and smsConsent opted_in; otherwise 409 INVALID_STATE naming what is missing. A body of 1..1,600 characters. Sent at once (quiet hours hold automatic texts only), at most one text a second per organization.',
        body: SendMessageBody,
        response: { 201: MessageResponse },
      },
    },
    async (request, reply) => {
      const data = await inRequestTenant(database.db, request, (ctx) => sendManualText(ctx, deps, request.body));
      return reply.code(201).send({ data });
    },
  );

  app.get(
    '/api/messages',
    {
      schema: {
        tags,
        summary: 'Texts both ways, newest first; filter by customerId, direction, status, kind',
        description:
          'Outbound texts (manual, visit reminders, on-my-way, document links, HELP answers) and inbound replies. Paginated like every list (see the README).',
        querystring: MessageListQuery,
        response: { 200: MessageList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const { customerId, direction, status, kind } = request.query;
      const result = await inRequestTenant(database.db, request, (ctx) =>
        listMessages(ctx, { customerId, direction, status, kind }, page),
      );
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/messages/:id',
    {
      schema: {
        tags,
        summary: 'One text',
        description: 'Its status, Twilio’s MessageSid (providerId) and error, when it went and was delivered.',
        params: IdParams,
        response: { 200: MessageResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => getMessage(ctx, request.params.id)),
    }),
  );

  app.get(
    '/api/customers/:id/messages',
    {
      schema: {
        tags: [...tags, 'customers'],
        summary: 'A customer’s conversation: texts both ways, newest first',
        description: 'GET /api/messages?customerId=… for this customer; 404 for an unknown customer.',
        params: IdParams,
        querystring: ConversationQuery,
        response: { 200: MessageList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) =>
        customerConversation(ctx, request.params.id, page),
      );
      return sendPage(request, reply, page, result);
    },
  );

  await app.register(twilioCallbackRoutes, { deps });
}

const OrganizationParams = Type.Object({ organizationId: Type.String({ minLength: 1, maxLength: 64 }) });
const TwilioFormBody = Type.Record(Type.String(), Type.String(), {
  description: 'The form Twilio posts (application/x-www-form-urlencoded)',
});

/**
 * Twilio's callbacks, in their own encapsulated plugin: they are form-encoded (their own content
 * type parser; JSON handling everywhere else is untouched) and carry no session, only the
 * X-Twilio-Signature, checked against the organization's auth token and the exact public URL
 * (BASE_URL + the path Twilio called) before anything is read or written.
 */
async function twilioCallbackRoutes(fastify: FastifyInstance, { deps }: { deps: TwilioDeps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body.toString())));
  });
  const twilioActor = systemActor('twilio');

  /** 404 unknown organization; 403 when the signature is missing or wrong (or no token to check it with). */
  async function verified(request: FastifyRequest, organizationId: string): Promise<TwilioForm> {
    // An id no organization can have is unknown like any other (404), not a malformed tenant (500).
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(organizationId)) throw notFound('Organization');
    const settings = await inTenant(database.db, organizationId, twilioActor, (ctx) => getOrgSettings(ctx));
    const credentials = twilioCredentials(settings, deps.box);
    const header = request.headers['x-twilio-signature'];
    const signature = Array.isArray(header) ? header[0] : header;
    const form = (request.body ?? {}) as TwilioForm;
    if (
      !credentials ||
      !signature ||
      !validateTwilioRequest(credentials.authToken, signature, `${deps.baseUrl}${request.url}`, form)
    ) {
      throw new AppError('FORBIDDEN', 'Missing or invalid X-Twilio-Signature');
    }
    return form;
  }

  const schema = (summary: string, description: string, response: Record<number, unknown>) => ({
    tags: ['messages'],
    summary,
    description,
    security: [],
    params: OrganizationParams,
    body: TwilioFormBody,
    consumes: ['application/x-www-form-urlencoded'],
    response,
  });

  app.post(
    '/api/sms/twilio/:organizationId/status',
    {
      config: { access: 'public', errors: [403] },
      schema: schema(
        'Twilio status callback (no session; X-Twilio-Signature checked)',
        'Set by the worker as each text’s statusCallback. A missing or wrong signature → 403 with nothing written; an unknown organization → 404; an unknown MessageSid → 204 with nothing written. A status that arrives before the worker recorded the MessageSid (Twilio called back before that commit) is kept and applied when the id is recorded, never lost. Status moves only forward (a repeat or a late `sent` is a no-op). delivered → message.delivered; undelivered/failed → message.failed; ErrorCode 21610 opts the customer out.',
        { 204: NoContent },
      ),
    },
    async (request, reply) => {
      const form = await verified(request, request.params.organizationId);
      await inTenant(database.db, request.params.organizationId, twilioActor, (ctx) => applyStatusCallback(ctx, form));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/sms/twilio/:organizationId/inbound',
    {
      config: { access: 'public', errors: [403] },
      schema: schema(
        'Twilio inbound text (no session; X-Twilio-Signature checked); answers TwiML <Response/>',
        'Point the Twilio number’s "A message comes in" webhook (HTTP POST) here. The text is recorded `received` for the customer whose phoneE164 equals From (message.received); a repeated MessageSid is a no-op. STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT → smsConsent opted_out; START, YES, UNSTOP → opted_in (source keyword); HELP → one auto_reply with the organization’s name and phone.',
        {
          200: {
            description: 'An empty TwiML response',
            content: { 'text/xml': { schema: { type: 'string' } } },
          },
        },
      ),
    },
    async (request, reply) => {
      const form = await verified(request, request.params.organizationId);
      await inTenant(database.db, request.params.organizationId, twilioActor, (ctx) => receiveInbound(ctx, deps, form));
      return reply.type('text/xml').send(emptyTwiml());
    },
  );
}
