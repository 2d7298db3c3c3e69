import { Type } from 'typebox';
import { DateTime, Envelope, Nullable, PageQuery } from '../../platform/schemas.js';

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'Receiver address: https (http and private addresses only when WEBHOOK_ALLOW_PRIVATE_TARGETS=true)',
});
const Events = Type.Array(Type.String({ minLength: 1, maxLength: 120 }), {
  minItems: 1,
  maxItems: 100,
  description:
    'Event names from the catalog, `*` (every catalog event, never workflow.*) or `workflow.<name>` named explicitly',
});
const Description = Type.String({ maxLength: 500 });
const RateLimit = Type.Integer({
  minimum: 1,
  maximum: 10_000,
  description:
    'At most this many delivery attempts started per second to this endpoint, over every worker (bursts up to the same number); null or absent: no rate limit, only the per-endpoint concurrency cap',
});

export const CreateWebhookBody = Type.Object(
  {
    url: Url,
    events: Events,
    description: Type.Optional(Nullable(Description)),
    rateLimitPerSecond: Type.Optional(Nullable(RateLimit)),
  },
  {
    additionalProperties: false,
    examples: [
      {
        url: 'https://hooks.example.com/crm',
        events: ['invoice.paid', 'job.completed'],
        description: 'Accounting sync',
        rateLimitPerSecond: 20,
      },
    ],
  },
);
export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    description: Type.Optional(Nullable(Description)),
    rateLimitPerSecond: Type.Optional(Nullable(RateLimit)),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const WebhookEndpoint = Type.Object(
  {
    id: Type.String({ description: 'whk_…' }),
    url: Type.String(),
    events: Type.Array(Type.String(), { description: 'As subscribed (`*` kept as given)' }),
    description: Nullable(Type.String()),
    active: Type.Boolean({
      description:
        'False once deactivated: the endpoint is deactivated when its consecutive failed deliveries reach 10',
    }),
    consecutiveFailures: Type.Integer({
      description:
        'Consecutive failed deliveries: deliveries whose last attempt failed and that became dead since the last successful attempt, requeue or enable (a failed attempt with retries left does not count); at 10 the endpoint is deactivated',
    }),
    deactivatedAt: Nullable(DateTime('When the endpoint was deactivated; null while active')),
    previousSecretExpiresAt: Nullable(
      DateTime('While a rotation overlap lasts, when the previous secret stops signing'),
    ),
    rateLimitPerSecond: Nullable(RateLimit),
    pausedUntil: Nullable(
      DateTime(
        'The receiver answered 429 or 503 with Retry-After: no attempt is made to it before this time (attempts are not used up meanwhile); null when not paused',
      ),
    ),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: 'whk_01JD1N4M5T901XXJW96D1KM7QW',
        url: 'https://hooks.example.com/crm',
        events: ['invoice.paid', 'job.completed'],
        description: 'Accounting sync',
        active: true,
        consecutiveFailures: 0,
        deactivatedAt: null,
        previousSecretExpiresAt: null,
        rateLimitPerSecond: 20,
        pausedUntil: null,
        createdAt: '2026-02-10T09:00:12.000Z',
        updatedAt: '2026-02-10T09:00:12.000Z',
      },
    ],
  },
);

export const CreatedWebhookEndpoint = Type.Object(
  {
    ...WebhookEndpoint.properties,
    secret: Type.String({ description: 'Signing secret (`whsec_…`), shown only here and at rotation' }),
  },
  { additionalProperties: false },
);

export const RotatedSecret = Type.Object(
  {
    id: Type.String(),
    secret: Type.String({ description: 'The new signing secret' }),
    previousSecretExpiresAt: DateTime('Deliveries are also signed with the previous secret until then (24 h)'),
  },
  { additionalProperties: false },
);

const DeliveryStatus = Type.Union(
  [Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('dead')],
  {
    description:
      'pending: not yet attempted or in flight; failed: an attempt failed and a retry is scheduled; succeeded; dead: attempts used up or endpoint deactivated (requeue to try again)',
  },
);

export const WebhookDelivery = Type.Object(
  {
    id: Type.String({ description: 'dlv_…; the X-Service-Delivery header and body `id`, constant across retries' }),
    endpointId: Type.String(),
    event: Type.String(),
    eventId: Nullable(Type.String({ description: 'The outbox event (null for test deliveries)' })),
    status: DeliveryStatus,
    attempts: Type.Integer({ description: 'Attempts made since creation or the last requeue' }),
    nextAttemptAt: Nullable(DateTime('When the next attempt is due (pending/failed only)')),
    lastAttemptAt: Nullable(DateTime()),
    lastStatusCode: Nullable(Type.Integer()),
    lastError: Nullable(Type.String()),
    succeededAt: Nullable(DateTime()),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  { additionalProperties: false },
);

export const WebhookAttempt = Type.Object(
  {
    id: Type.String(),
    attemptedAt: DateTime(),
    statusCode: Nullable(Type.Integer({ description: 'Null when no response arrived (time-out, refused, blocked)' })),
    durationMs: Type.Integer(),
    error: Nullable(Type.String()),
    responseBody: Nullable(Type.String({ description: 'First 4 KiB of the response body' })),
  },
  { additionalProperties: false },
);

export const WebhookDeliveryDetail = Type.Object(
  {
    ...WebhookDelivery.properties,
    payload: Type.Unknown({ description: 'The JSON body sent with every attempt' }),
    attemptLog: Type.Array(WebhookAttempt, { description: 'Every attempt, oldest first' }),
  },
  { additionalProperties: false },
);

export const DeliveryListQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(DeliveryStatus) },
  { additionalProperties: false },
);

export const WebhookEndpointResponse = Envelope(WebhookEndpoint);
export const WebhookEndpointList = Envelope(Type.Array(WebhookEndpoint));
export const CreatedWebhookEndpointResponse = Envelope(CreatedWebhookEndpoint);
export const RotatedSecretResponse = Envelope(RotatedSecret);
export const WebhookDeliveryResponse = Envelope(WebhookDelivery);
export const WebhookDeliveryList = Envelope(Type.Array(WebhookDelivery));
export const WebhookDeliveryDetailResponse = Envelope(WebhookDeliveryDetail);
