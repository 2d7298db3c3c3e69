import { ERROR_STATUS, type ErrorCode } from './errors.js';

/**
 * Finishing pass over the document @fastify/swagger generates, so that everything an
 * SDK generator needs is derived here, once, from what every route already declares
 * (method, path, access level, schemas). A route added later gets its operationId,
 * error responses, security, headers and Idempotency-Key parameter without doing anything.
 */

/** A route as registered (filled by an onRoute hook in buildApp). */
export interface RegisteredRoute {
  method: string;
  url: string;
  hidden: boolean;
  responseStatuses: string[];
  /** Whether the route's own schema has a description (the completeness test requires one). */
  hasDescription: boolean;
  access: 'public' | 'user' | 'tenant';
  roles: readonly string[] | undefined;
  feature: string | undefined;
  /** Extra error statuses a route can answer beyond what its shape implies (config.errors). */
  errors: readonly number[];
  /** The route's request schemas (the validation-messages test walks their error paths). */
  inputs?: { body?: unknown; querystring?: unknown; params?: unknown } | undefined;
  /** The URL as a regular expression, compiled on first use (405 detection). */
  pattern?: RegExp;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Error statuses the route can answer that its method and path do not imply (e.g. 404 on a referenced id). */
    errors?: readonly number[];
  }
}

type Json = Record<string, unknown>;
type Operation = Json & {
  operationId?: string;
  summary?: string;
  description?: string;
  parameters?: Json[];
  requestBody?: Json;
  responses?: Record<string, Json>;
  security?: Json[];
};

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

/** Names of the shared error responses, per status. */
const ERROR_RESPONSES: Record<number, { name: string; description: string }> = {
  400: { name: 'BadRequest', description: 'The request is invalid: one `details` entry per offending field' },
  401: { name: 'Unauthenticated', description: 'No credentials, or an invalid session or API key' },
  403: {
    name: 'Forbidden',
    description: "The caller's role, plan or missing active organization does not allow this",
  },
  404: { name: 'NotFound', description: 'No such resource in the active organization' },
  405: { name: 'MethodNotAllowed', description: 'The path exists but not with this method; see `Allow`' },
  409: { name: 'Conflict', description: 'The resource is not in a state that allows this, or a request conflicts' },
  410: { name: 'Gone', description: 'The resource existed but is gone for good (e.g. an expired export)' },
  413: { name: 'PayloadTooLarge', description: 'The body is larger than 1 MiB' },
  415: { name: 'UnsupportedMediaType', description: 'The body is not application/json' },
  422: { name: 'IdempotencyKeyReused', description: 'The Idempotency-Key was used with a different request' },
  429: { name: 'RateLimited', description: 'Too many requests; retry after `Retry-After` seconds' },
  500: { name: 'InternalError', description: 'Unexpected failure; quote the requestId when reporting it' },
  503: {
    name: 'ServiceUnavailable',
    description: 'A dependency (e.g. the mail server) is unavailable; nothing changed',
  },
};

export function codesOfStatus(status: number): ErrorCode[] {
  return (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((c) => ERROR_STATUS[c] === status);
}

const pascal = (s: string) =>
  s
    .split(/[-_]/)
    .filter(Boolean)
    .map((w) => w[0]?.toUpperCase() + w.slice(1))
    .join('');
const camel = (s: string) => {
  const p = pascal(s);
  return p.charAt(0).toLowerCase() + p.slice(1);
};
const singular = (s: string) => (s.endsWith('ies') ? `${s.slice(0, -3)}y` : /[^s]s$/.test(s) ? s.slice(0, -1) : s);

/**
 * `listCustomers`, `getCustomer`, `createCustomer`, `updateCustomer`, `deleteCustomer`,
 * `deactivateCustomer` (an action under an id), `createInvoicePayment` (a plural
 * sub-collection), `getJobsCalendar`. A route may set `schema.operationId` instead.
 */
export function deriveOperationId(method: string, url: string, opts: { isList: boolean; hasPatch: boolean }): string {
  const segments = url.replace(/^\/api\//, '').split('/');
  const isParam = (s: string | undefined) => s?.startsWith(':') || s?.startsWith('{');
  const last = segments.at(-1) as string;
  const m = method.toLowerCase();
  let verb: string;
  let nameSegments = segments;
  const actionLike = !isParam(last) && isParam(segments.at(-2)) && !last.endsWith('s');
  if ((m === 'post' || m === 'delete') && actionLike) {
    verb = camel(last);
    nameSegments = segments.slice(0, -1);
  } else if (m === 'get') verb = opts.isList ? 'list' : 'get';
  else if (m === 'post') verb = 'create';
  else if (m === 'patch') verb = 'update';
  else if (m === 'put') verb = opts.hasPatch ? 'put' : 'update';
  else verb = m;
  const names: string[] = [];
  nameSegments.forEach((seg, i) => {
    if (isParam(seg)) return;
    const next = nameSegments[i + 1];
    // A collection named by what one item is, when the operation is about one item (or creates one).
    const one = isParam(next) || (i === nameSegments.length - 1 && (verb === 'create' || (m === 'delete' && !next)));
    names.push(pascal(one ? singular(seg) : seg));
  });
  return verb + names.join('');
}

function isListResponse(doc: Json, op: Operation): boolean {
  const schema = (op.responses?.['200']?.content as Json | undefined)?.['application/json'] as Json | undefined;
  const resolved = resolveRef(doc, schema?.schema as Json | undefined);
  const data = resolveRef(doc, (resolved?.properties as Json | undefined)?.data as Json | undefined);
  return data?.type === 'array';
}

function resolveRef(doc: Json, schema: Json | undefined): Json | undefined {
  const ref = schema?.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return schema;
  let node: unknown = doc;
  for (const part of ref.slice(2).split('/')) node = (node as Json | undefined)?.[part];
  return node as Json | undefined;
}

/** The error statuses a route can answer, from its shape and access level. */
export function errorStatuses(route: RegisteredRoute): number[] {
  // 400 on every route: a NUL anywhere in the query or path, or a malformed URL, is refused before any handler.
  const statuses = new Set<number>([400, 429, 500]);
  const m = route.method.toUpperCase();
  if (route.access !== 'public') {
    statuses.add(401);
    statuses.add(403);
  }
  if (/\/:[^/]+/.test(route.url)) statuses.add(404);
  if (m !== 'GET') statuses.add(409); // POST: the same Idempotency-Key still in progress
  if (m !== 'GET') {
    // Any body sent is parsed before the route runs (whether or not it takes one): over 1 MiB, or not JSON.
    statuses.add(413);
    statuses.add(415);
  }
  if (m === 'POST') statuses.add(422);
  for (const s of route.errors) statuses.add(s);
  return [...statuses].sort((a, b) => a - b);
}

const ACCESS_NOTE: Record<RegisteredRoute['access'], string> = {
  public: 'No credentials needed.',
  user: 'Needs a signed-in user session (not an API key).',
  tenant: 'Needs a session with an active organization, or an API key (Business plan).',
};

const header = (description: string, schema: Json = { type: 'string' }) => ({ description, schema });

function components(doc: Json): Json {
  doc.components ??= {};
  return doc.components as Json;
}

function errorSchema(status: number): Json {
  return {
    type: 'object',
    title: `Error${status}`,
    required: ['error'],
    additionalProperties: false,
    properties: {
      error: {
        type: 'object',
        required: ['message', 'code', 'requestId'],
        additionalProperties: false,
        properties: {
          message: { type: 'string', description: 'What went wrong, in plain words' },
          code: { type: 'string', enum: codesOfStatus(status), description: 'Stable machine-readable code' },
          requestId: { type: 'string', description: 'Same as the X-Request-Id response header' },
          details: {
            type: 'array',
            description: 'One entry per offending field (VALIDATION_FAILED)',
            items: {
              type: 'object',
              required: ['field', 'message'],
              additionalProperties: false,
              properties: {
                field: { type: 'string', description: 'Dotted path of the field, e.g. `address.zip`' },
                message: { type: 'string' },
              },
            },
          },
        },
      },
    },
  };
}

/**
 * What the `webhooks` section describes, handed down from the top (src/modules/event-payloads.ts):
 * the `data` schema of each event, and the resource schemas they carry by component name.
 */
export interface WebhookPayloads {
  payloads: ReadonlyMap<string, object>;
  resources: Readonly<Record<string, object>>;
}

export interface FinishOptions {
  version: string;
  servers: Json[];
  webhooks?: WebhookPayloads;
}

/** Completes the generated document in place and returns it (the `transformObject` of @fastify/swagger). */
export function finishDocument(doc: Json, routes: RegisteredRoute[], opts: FinishOptions): Json {
  const info = (doc.info ?? {}) as Json;
  info.version = opts.version;
  info.license ??= { name: 'Proprietary', url: 'https://example.org/license' };
  doc.info = info;
  doc.servers = opts.servers;
  const comps = components(doc);
  const section = (name: string): Json => {
    comps[name] ??= {};
    return comps[name] as Json;
  };
  const schemas = section('schemas');
  const responses = section('responses');
  const headers = section('headers');
  const parameters = section('parameters');
  Object.assign(headers, {
    'X-Request-Id': header('Identifies the request in logs; echoes a valid incoming X-Request-Id'),
    'RateLimit-Policy': header('The rate-limit policy, e.g. `"default";q=600;w=60`'),
    RateLimit: header('Requests left and seconds until the window resets, e.g. `"default";r=599;t=60`'),
    'Retry-After': header('Seconds to wait before retrying', { type: 'integer' }),
    Link: header('`<url>; rel="next"` when there is a next page'),
    'X-Total-Count': header('Total matching items (only with includeTotal=true)', { type: 'integer' }),
  });
  parameters.IdempotencyKey = {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Makes a POST safe to retry: the first response for this key (and the same request) is replayed for 24 hours.',
    schema: { type: 'string', minLength: 1, maxLength: 255 },
  };
  comps.securitySchemes = {
    session: { type: 'apiKey', in: 'cookie', name: 'better-auth.session_token', description: 'Session cookie' },
    apiKey: { type: 'http', scheme: 'bearer', description: 'API key (sk_…) as a bearer token; Business plan' },
    apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'API key (sk_…); Business plan' },
  };
  const rateHeaders = {
    'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
    'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
    RateLimit: { $ref: '#/components/headers/RateLimit' },
  };
  const usedErrors = new Set<number>();

  const paths = (doc.paths ?? {}) as Record<string, Record<string, Operation>>;
  const byKey = new Map(routes.map((r) => [`${r.method.toLowerCase()} ${openApiPath(r.url)}`, r]));
  const taken = new Set<string>();
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const route = byKey.get(`${method} ${path}`);
      const isList = method === 'get' && isListResponse(doc, op);
      if (!op.operationId) {
        let id = deriveOperationId(method, path, { isList, hasPatch: item.patch !== undefined });
        if (taken.has(id)) id = `${id}${pascal(method)}`;
        op.operationId = id;
      }
      taken.add(op.operationId);
      if (route) {
        const notes = [ACCESS_NOTE[route.access]];
        if (route.roles) notes.push(`Roles: ${route.roles.join(', ')}.`);
        if (route.feature) notes.push('Plan: Business.');
        op.description = [op.description, notes.join(' ')].filter(Boolean).join('\n\n');
        op.security =
          route.access === 'public'
            ? []
            : route.access === 'user'
              ? [{ session: [] }]
              : [{ session: [] }, { apiKey: [] }, { apiKeyHeader: [] }];
      }
      if (method === 'post') {
        op.parameters = [...(op.parameters ?? []), { $ref: '#/components/parameters/IdempotencyKey' }];
      }
      const out: Record<string, Json> = {};
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        // Successes and the redirects a route declares (the portal link sends a browser on with 303).
        if (!/^[23]\d\d$/.test(status)) continue;
        if (!response.description || response.description === 'Default Response') {
          response.description =
            status === '201' ? 'Created' : status === '204' ? 'No content' : isList ? 'A page of results' : 'OK';
        }
        const h: Json = { ...rateHeaders };
        if (isList && status === '200') {
          h.Link = { $ref: '#/components/headers/Link' };
          h['X-Total-Count'] = { $ref: '#/components/headers/X-Total-Count' };
        }
        response.headers = { ...((response.headers as Json | undefined) ?? {}), ...h };
        out[status] = response;
      }
      for (const status of route ? errorStatuses(route) : [400, 429, 500]) {
        usedErrors.add(status);
        out[String(status)] = { $ref: `#/components/responses/${ERROR_RESPONSES[status]?.name}` };
      }
      op.responses = out;
    }
  }
  for (const status of [...usedErrors].sort((a, b) => a - b)) {
    const spec = ERROR_RESPONSES[status];
    if (!spec) continue;
    schemas[`Error${status}`] = errorSchema(status);
    const h: Json = { ...rateHeaders };
    if (status === 429) h['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
    responses[spec.name] = {
      description: spec.description,
      headers: h,
      content: { 'application/json': { schema: { $ref: `#/components/schemas/Error${status}` } } },
    };
  }
  // The serialisation-only catch-all is replaced by the per-status schemas above.
  if (!JSON.stringify(paths).includes('#/components/schemas/ErrorBody')) delete schemas.ErrorBody;
  if (!Object.values(paths).some((i) => i.post)) delete parameters.IdempotencyKey;
  doc.webhooks = webhookDocs(schemas, opts.webhooks ?? { payloads: new Map(), resources: {} });
  dropInlineDiscriminators(doc.paths);
  return doc;
}

/**
 * A `discriminator` over inline `oneOf` branches (e.g. workflow actions tagged by
 * `type`) tells the validator which branch to report errors for (src/platform/validation.ts);
 * OpenAPI lets a discriminator select only `$ref` branches, so the document keeps the
 * plain `oneOf`, whose branches each fix the tag with `const` (generators still see a union).
 */
function dropInlineDiscriminators(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) dropInlineDiscriminators(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const obj = node as Json;
  if (obj.discriminator && Array.isArray(obj.oneOf) && obj.oneOf.some((b) => !(b as Json).$ref)) {
    delete obj.discriminator;
  }
  for (const value of Object.values(obj)) dropInlineDiscriminators(value);
}

export const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/**
 * A TypeBox schema as plain JSON (enumerable keys only, as JSON.stringify sees it), with every
 * object that IS one of the named resources replaced by a `$ref` to its component.
 */
function withRefs(node: unknown, names: ReadonlyMap<object, string>, top = true): unknown {
  if (node === null || typeof node !== 'object') return node;
  const name = top ? undefined : names.get(node);
  if (name) return { $ref: `#/components/schemas/${name}` };
  if (Array.isArray(node)) return node.map((n) => withRefs(n, names, false));
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) out[key] = withRefs(value, names, false);
  return out;
}

/** The OpenAPI 3.1 `webhooks` section: one POST per catalog event, the delivery envelope around its data. */
function webhookDocs(schemas: Json, described: WebhookPayloads): Json {
  schemas.WebhookDelivery = {
    type: 'object',
    title: 'WebhookDelivery',
    description:
      'The body of every webhook delivery. Verify `X-Service-Signature` (t=<seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">) or the Standard Webhooks headers before trusting it.',
    required: ['id', 'event', 'timestamp', 'organizationId', 'data'],
    properties: {
      id: { type: 'string', description: 'Delivery id; the same on every retry of this delivery' },
      event: { type: 'string', description: 'Event type' },
      timestamp: { type: 'string', format: 'date-time', description: 'When the event happened (UTC)' },
      organizationId: { type: 'string' },
      data: { type: 'object', description: 'The event data', additionalProperties: true },
    },
  };
  // The resources the payloads carry, as the same schemas the API answers with.
  const names = new Map(Object.entries(described.resources).map(([name, schema]) => [schema, name]));
  for (const [name, schema] of Object.entries(described.resources)) {
    schemas[name] ??= { title: name, ...(withRefs(schema, names) as Json) };
  }
  const out: Json = {};
  for (const [event, payload] of described.payloads) {
    const name = `${pascal(event.replace(/[.]/g, '-'))}Event`;
    schemas[name] = {
      title: name,
      allOf: [
        { $ref: '#/components/schemas/WebhookDelivery' },
        {
          type: 'object',
          properties: {
            event: { const: event },
            data: { ...(withRefs(payload, names) as Json), description: `The data of \`${event}\`` },
          },
        },
      ],
    };
    out[event] = {
      post: {
        operationId: `on${pascal(event.replace(/[.]/g, '-'))}`,
        summary: `The ${event} event`,
        description: `Sent to every enabled endpoint subscribed to \`${event}\` (or \`*\`). Answer 2xx within 10 seconds; anything else is retried on the schedule.`,
        tags: ['webhooks'],
        security: [],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } },
        },
        responses: {
          '200': { description: 'Received (any 2xx counts)' },
          '400': { description: 'Rejected; the delivery is retried' },
        },
      },
    };
  }
  return out;
}
