import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { EmptyBody, IdParams, NoContent, PageQuery } from '../../platform/schemas.js';
import { SecretBox } from '../../platform/secrets.js';
import {
  CreatedWebhookEndpointResponse,
  CreateWebhookBody,
  DeliveryListQuery,
  RotatedSecretResponse,
  UpdateWebhookBody,
  WebhookDeliveryDetailResponse,
  WebhookDeliveryList,
  WebhookDeliveryResponse,
  WebhookEndpointList,
  WebhookEndpointResponse,
} from './webhooks.schemas.js';
import {
  checkEvents,
  checkWebhookUrl,
  createEndpoint,
  deleteEndpoint,
  enableEndpoint,
  getDelivery,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  requeueDelivery,
  rotateSecret,
  sendTestDelivery,
  updateEndpoint,
} from './webhooks.service.js';

/**
 * Action routes take no body: none at all, or `{}` (decisions §3). The shared
 * EmptyBody schema refuses a missing body under this validator, so it is checked here.
 */
/** Webhook endpoints and their deliveries: Business plan, owner/admin (decisions §2, §5). */
export default async function webhookRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, config: appConfig } = app.deps;
  const box = new SecretBox(appConfig.authSecret);
  const config = { roles: ['owner', 'admin'], feature: 'webhooks' } as const;
  const tags = ['webhooks'];

  app.post(
    '/api/webhooks',
    {
      config,
      schema: {
        tags,
        summary: 'Register a webhook endpoint (the signing secret is shown once)',
        description:
          'Unknown event names reject the whole request (400) and nothing is registered. `*` subscribes to every catalog event; `workflow.<name>` events must be named explicitly.',
        body: CreateWebhookBody,
        response: { 201: CreatedWebhookEndpointResponse },
      },
    },
    async (request, reply) => {
      const events = checkEvents(request.body.events);
      const url = await checkWebhookUrl(appConfig, request.body.url);
      const data = await inRequestTenant(database.db, request, (ctx) =>
        createEndpoint(ctx, box, { ...request.body, url, events }),
      );
      return reply.code(201).send({ data });
    },
  );

  app.get(
    '/api/webhooks',
    {
      config,
      schema: {
        tags,
        summary: 'List webhook endpoints (no secrets)',
        description: 'Paginated like every list (see the README).',
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: WebhookEndpointList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listEndpoints(ctx, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/webhooks/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Get a webhook endpoint',
        description: 'Its events, state and failure counter; never the secret.',
        params: IdParams,
        response: { 200: WebhookEndpointResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => getEndpoint(ctx, request.params.id)),
    }),
  );

  app.patch(
    '/api/webhooks/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Change url, events, description or rateLimitPerSecond',
        description: 'The same event-name rules as on creation apply.',
        params: IdParams,
        body: UpdateWebhookBody,
        response: { 200: WebhookEndpointResponse },
      },
    },
    async (request) => {
      const { url, events, description, rateLimitPerSecond } = request.body;
      const patch = {
        url: url === undefined ? undefined : await checkWebhookUrl(appConfig, url),
        events: events === undefined ? undefined : checkEvents(events),
        description,
        rateLimitPerSecond,
      };
      return {
        data: await inRequestTenant(database.db, request, (ctx) => updateEndpoint(ctx, request.params.id, patch)),
      };
    },
  );

  app.delete(
    '/api/webhooks/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Delete an endpoint and its delivery history',
        description: 'Pending deliveries to it are dropped.',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => deleteEndpoint(ctx, request.params.id));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/webhooks/:id/rotate-secret',
    {
      config,
      schema: {
        body: EmptyBody,
        tags,
        operationId: 'rotateWebhookSecret',
        summary: 'Rotate the signing secret (previous secret keeps signing for 24 h)',
        description:
          'Deliveries carry two v1 signatures (new, then previous) until previousSecretExpiresAt. Rotating again inside the window drops the older secret at once.',
        params: IdParams,
        response: { 200: RotatedSecretResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => rotateSecret(ctx, box, request.params.id)),
    }),
  );

  app.post(
    '/api/webhooks/:id/enable',
    {
      config,
      schema: {
        body: EmptyBody,
        tags,
        summary: 'Re-enable an endpoint and reset its failure counter',
        description: 'An endpoint is disabled automatically after repeated failures.',
        params: IdParams,
        response: { 200: WebhookEndpointResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => enableEndpoint(ctx, request.params.id)),
    }),
  );

  app.post(
    '/api/webhooks/:id/test',
    {
      config,
      schema: {
        body: EmptyBody,
        tags,
        summary: 'Queue one webhook.test delivery to the endpoint',
        description: 'Delivered by the worker like any event, signed with the current secret.',
        params: IdParams,
        response: { 200: WebhookDeliveryResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => sendTestDelivery(ctx, request.params.id)),
    }),
  );

  app.get(
    '/api/webhooks/:id/deliveries',
    {
      config,
      schema: {
        tags,
        summary: "List an endpoint's deliveries, newest first",
        description: 'With their status and attempt count. Paginated like every list (see the README).',
        params: IdParams,
        querystring: DeliveryListQuery,
        response: { 200: WebhookDeliveryList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) =>
        listDeliveries(ctx, request.params.id, { status: request.query.status }, page),
      );
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/webhook-deliveries/:id',
    {
      config,
      schema: {
        tags,
        summary: 'A delivery with its payload and every attempt',
        description: 'Each attempt with its time, HTTP status and error.',
        params: IdParams,
        response: { 200: WebhookDeliveryDetailResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => getDelivery(ctx, request.params.id)),
    }),
  );

  app.post(
    '/api/webhook-deliveries/:id/requeue',
    {
      config,
      schema: {
        body: EmptyBody,
        tags,
        summary: 'Requeue a dead delivery (attempts start again; endpoint failure counter reset)',
        description: '409 INVALID_STATE unless the delivery is dead.',
        params: IdParams,
        response: { 200: WebhookDeliveryResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => requeueDelivery(ctx, request.params.id)),
    }),
  );
}
