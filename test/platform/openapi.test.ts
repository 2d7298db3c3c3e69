import { readFileSync } from 'node:fs';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASS_THROUGH_BODIES } from '../../src/modules/auth/auth.schemas.js';
import { EVENT_CATALOG } from '../../src/platform/events/catalog.js';
import { createHarness, type Harness } from '../harness.js';

/**
 * /openapi.json must describe every /api route. The list of routes comes from the
 * app itself (an onRoute hook in buildApp), so routes added by any module later are
 * checked without touching this file. Only Better Auth's passthrough is exempt: its catch-all
 * and the routes that validate a body before passing it through (undocumented as the catch-all).
 */
const EXEMPT = new Set(['/api/auth/*', ...Object.keys(PASS_THROUGH_BODIES).map((path) => `/api/auth/${path}`)]);

type Doc = {
  paths: Record<
    string,
    Record<string, { summary?: string; operationId?: string; tags?: string[]; responses?: Record<string, unknown> }>
  >;
};

function apiRoutes(app: FastifyInstance) {
  return app.registeredRoutes.filter(
    (r) => r.url.startsWith('/api/') && !EXEMPT.has(r.url) && r.method !== 'HEAD' && r.method !== 'OPTIONS',
  );
}

const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** Every way a registered /api route can be missing from, or incomplete in, the document. */
function openApiProblems(app: FastifyInstance): string[] {
  const doc = app.swagger() as Doc;
  const problems: string[] = [];
  for (const route of apiRoutes(app)) {
    const name = `${route.method} ${route.url}`;
    if (route.hidden) problems.push(`${name}: hidden from the document`);
    if (!route.responseStatuses.some((s) => /^2\d\d$/.test(s))) problems.push(`${name}: no success response schema`);
    const op = doc.paths[openApiPath(route.url)]?.[route.method.toLowerCase()];
    if (!op) {
      problems.push(`${name}: missing from /openapi.json`);
      continue;
    }
    if (!op.summary) problems.push(`${name}: no summary`);
    // The route's own description: the access note added for every operation does not count.
    if (!route.hasDescription) problems.push(`${name}: no description`);
    if (!op.operationId) problems.push(`${name}: no operationId`);
    if (!op.tags?.length) problems.push(`${name}: no tags`);
    if (!Object.keys(op.responses ?? {}).some((s) => /^4\d\d$/.test(s))) {
      problems.push(`${name}: error responses not documented`);
    }
  }
  return problems;
}

describe('OpenAPI document', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => h?.close());

  it('collects the registered routes', () => {
    const urls = apiRoutes(h.app).map((r) => `${r.method} ${r.url}`);
    expect(urls).toEqual(
      expect.arrayContaining(['POST /api/organizations', 'GET /api/members', 'DELETE /api/api-keys/:id']),
    );
  });

  it('documents every /api route with a success response schema, summary and tags', () => {
    expect(openApiProblems(h.app)).toEqual([]);
  });

  it('answers 401 without credentials on every /api route except /api/auth/*, /api/portal/*, Stripe and Twilio callbacks and the booking form', async () => {
    // Stripe's events and Twilio's callbacks carry their signature, not our credentials
    // (test/payments/stripe.test.ts, test/messages/messages.test.ts); the booking form is public
    // by design (test/requests/public-requests.test.ts).
    const open = (url: string) =>
      url.startsWith('/api/auth/') ||
      url.startsWith('/api/portal/') ||
      url.startsWith('/api/payments/stripe/') ||
      url.startsWith('/api/sms/twilio/') ||
      url.startsWith('/api/public/');
    const problems: string[] = [];
    for (const route of h.app.registeredRoutes) {
      if (!route.url.startsWith('/api/') || open(route.url) || route.method === 'OPTIONS') continue;
      const url = route.url.replace(/:[A-Za-z0-9_]+/g, 'x_1').replace('*', 'x');
      const res = await h.app.inject({
        method: route.method as 'GET',
        url,
        payload: route.method === 'GET' || route.method === 'HEAD' ? undefined : {},
      });
      if (res.statusCode !== 401) problems.push(`${route.method} ${route.url}: ${res.statusCode}`);
    }
    expect(problems).toEqual([]);
  });

  it('serves the same document at /openapi.json, OpenAPI 3.1 with both security schemes', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiKey', 'apiKeyHeader', 'session']);
    expect(doc.components.schemas.Error404.properties.error.properties.code.enum).toEqual(['NOT_FOUND']);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/auth/sign-in/email', '/api/organizations']));
    expect(Object.keys(doc.paths).some((p) => p.includes('*'))).toBe(false);
  });
});

describe('OpenAPI document for SDK generators', () => {
  let h: Harness;
  // biome-ignore lint/suspicious/noExplicitAny: a parsed JSON document, navigated by hand
  let doc: any;
  beforeAll(async () => {
    h = await createHarness();
    doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  });
  afterAll(async () => h?.close());

  const operations = () =>
    Object.entries(doc.paths as Record<string, Record<string, Record<string, unknown>>>).flatMap(([path, item]) =>
      // biome-ignore lint/suspicious/noExplicitAny: see above
      Object.entries(item).map(([method, op]) => ({ path, method, op: op as any })),
    );

  it('lints clean with Redocly (recommended rules): no errors, no warnings', async () => {
    // One rule off, by contract: operations.md fixes both POST /api/payments/{id}/refunds and
    // POST /api/payments/stripe/{organizationId}. They cannot collide in practice: the router
    // matches the static `stripe` segment first, and no payment id is "stripe" (ids are pay_…).
    const config = await createConfig({ extends: ['recommended'], rules: { 'no-ambiguous-paths': 'off' } });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: '/openapi.json', config });
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
  });

  it('derives unique camelCase operationIds from method and path', () => {
    const ids = operations().map((o) => o.op.operationId as string);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z][A-Za-z0-9]*$/);
    const byRoute = Object.fromEntries(operations().map((o) => [`${o.method} ${o.path}`, o.op.operationId]));
    expect(byRoute).toMatchObject({
      'get /api/customers': 'listCustomers',
      'get /api/customers/{id}': 'getCustomer',
      'post /api/customers': 'createCustomer',
      'patch /api/customers/{id}': 'updateCustomer',
      'delete /api/customers/{id}': 'deleteCustomer',
      'post /api/customers/{id}/deactivate': 'deactivateCustomer',
      'post /api/invoices/{id}/payments': 'createInvoicePayment',
      'patch /api/invoices/{id}': 'updateInvoice',
      'put /api/invoices/{id}': 'putInvoice',
      'get /api/webhooks/{id}/deliveries': 'listWebhookDeliveries',
      'post /api/auth/sign-in/email': 'signIn',
    });
  });

  it('names every response and adds the error responses that apply to each route', () => {
    for (const { op } of operations()) {
      for (const [status, response] of Object.entries(op.responses as Record<string, { description?: string }>)) {
        expect(status).toMatch(/^\d{3}$/);
        if (!('$ref' in response)) expect(response.description).not.toBe('Default Response');
      }
    }
    const statuses = (method: string, path: string) => Object.keys(doc.paths[path][method].responses);
    // Public: no 401; no id: no 404; only POST has 422; GET has no body: no 413/415.
    expect(statuses('get', '/api/portal/{token}')).not.toContain('401');
    expect(statuses('get', '/api/customers')).toEqual(['200', '400', '401', '403', '429', '500']);
    expect(statuses('post', '/api/customers')).toEqual(
      expect.arrayContaining(['201', '400', '401', '403', '409', '413', '415', '422', '429', '500']),
    );
    expect(statuses('post', '/api/customers')).not.toContain('404');
    expect(statuses('patch', '/api/customers/{id}')).toContain('404');
    expect(statuses('patch', '/api/customers/{id}')).not.toContain('422');
    expect(doc.components.responses.Forbidden.content['application/json'].schema.$ref).toBe(
      '#/components/schemas/Error403',
    );
    expect(doc.components.schemas.Error403.properties.error.properties.code.enum).toEqual([
      'FORBIDDEN',
      'PLAN_REQUIRED',
      'NO_ACTIVE_ORGANIZATION',
    ]);
    expect(Object.keys(doc.components.responses.RateLimited.headers)).toContain('Retry-After');
  });

  it('declares security per access level, Idempotency-Key on every POST, and response headers', () => {
    expect(doc.paths['/api/portal/{token}'].get.security).toEqual([]);
    expect(doc.paths['/api/organizations'].post.security).toEqual([{ session: [] }]);
    expect(doc.paths['/api/customers'].get.security).toEqual([{ session: [] }, { apiKey: [] }, { apiKeyHeader: [] }]);
    for (const { method, op } of operations()) {
      const refs = (op.parameters ?? []).map((p: { $ref?: string }) => p.$ref);
      expect(refs.includes('#/components/parameters/IdempotencyKey')).toBe(method === 'post');
      for (const [status, response] of Object.entries(op.responses as Record<string, { headers?: object }>)) {
        if (status.startsWith('2')) expect(Object.keys(response.headers ?? {})).toContain('X-Request-Id');
      }
    }
    const list = doc.paths['/api/invoices'].get.responses['200'].headers;
    expect(Object.keys(list)).toEqual(
      expect.arrayContaining(['Link', 'X-Total-Count', 'RateLimit', 'RateLimit-Policy']),
    );
    expect(Object.keys(doc.paths['/api/invoices/{id}'].get.responses['200'].headers)).not.toContain('Link');
  });

  it('serves a relative server, the package version, and one webhook per catalog event', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(doc.info.version).toBe(pkg.version);
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_CATALOG].sort());
    expect(doc.webhooks['invoice.paid'].post.requestBody.content['application/json'].schema.$ref).toBe(
      '#/components/schemas/InvoicePaidEvent',
    );
  });

  it('shows request examples on the main resources and a response example on customers', () => {
    // @fastify/swagger moves a body schema's `examples` to the media type's `example` ("Try it out" fills it in).
    const body = (path: string) => doc.paths[path].post.requestBody.content['application/json'];
    for (const path of [
      '/api/customers',
      '/api/properties',
      '/api/invoices',
      '/api/estimates',
      '/api/jobs',
      '/api/contracts',
      '/api/invoices/{id}/payments',
      '/api/webhooks',
    ]) {
      expect(body(path).example, path).toBeTypeOf('object');
    }
    const customer = doc.paths['/api/customers/{id}'].get.responses['200'].content['application/json'].schema;
    expect(customer.properties.data.examples[0]).toMatchObject({ name: 'Dana Whitfield' });
  });

  it('shows a response example on every main resource', () => {
    // A list answers `data: [resource]`, a read or create `data: resource` (or a detail that extends it).
    for (const path of [
      '/api/properties',
      '/api/invoices',
      '/api/estimates',
      '/api/jobs',
      '/api/contracts',
      '/api/payments',
      '/api/webhooks',
      '/api/purchase-orders',
      '/api/bills',
      '/api/vendors',
      '/api/equipment',
      '/api/winter-routes',
    ]) {
      const items = doc.paths[path].get.responses['200'].content['application/json'].schema.properties.data.items;
      const examples = items.examples ?? doc.components.schemas[items.$ref?.split('/').pop()]?.examples;
      expect(examples?.[0]?.id, path).toBeTypeOf('string');
    }
  });

  it('every example in the document validates against its schema', () => {
    // The same validator settings as the app's (strict off: OpenAPI keywords sit beside JSON Schema ones).
    const ajv = new Ajv({ allErrors: true, strict: false, logger: false });
    (addFormats as unknown as (a: Ajv) => void)(ajv);
    // Each schema is compiled with the document's components beside it, so `#/components/schemas/X` resolves.
    const check = (schema: object, example: unknown, where: string) => {
      const validate = ajv.compile({ ...schema, components: doc.components });
      expect(validate(example) ? [] : validate.errors, where).toEqual([]);
      checked++;
    };
    let checked = 0;
    const walk = (node: unknown, where: string) => {
      if (Array.isArray(node)) {
        node.forEach((n, i) => {
          walk(n, `${where}/${i}`);
        });
        return;
      }
      if (node === null || typeof node !== 'object') return;
      const n = node as Record<string, unknown>;
      if (n.schema && typeof n.schema === 'object') {
        // A media type or a parameter: `example`, or `examples` as a map of Example Objects.
        if ('example' in n) check(n.schema, n.example, `${where}/example`);
        if (n.examples && typeof n.examples === 'object' && !Array.isArray(n.examples)) {
          for (const [name, e] of Object.entries(n.examples as Record<string, { value?: unknown }>)) {
            if (e && 'value' in e) check(n.schema, e.value, `${where}/examples/${name}`);
          }
        }
      } else {
        // A schema: JSON Schema `examples` (an array), or OpenAPI 3.0's `example`.
        if (Array.isArray(n.examples)) {
          n.examples.forEach((e, i) => {
            check(n, e, `${where}/examples/${i}`);
          });
        }
        if ('example' in n) check(n, n.example, `${where}/example`);
      }
      for (const [key, value] of Object.entries(n))
        if (key !== 'examples' && key !== 'example') walk(value, `${where}/${key}`);
    };
    walk(doc, '#');
    expect(checked).toBeGreaterThan(20);
  });

  it('describes each webhook payload with the resource schemas the API answers with', () => {
    for (const event of EVENT_CATALOG) {
      const data =
        doc.components.schemas[
          `${event.replace(/(^|[._-])([a-z])/g, (_m: string, _p: string, c: string) => c.toUpperCase())}Event`
        ].allOf[1].properties.data;
      const refs = Object.values(data.properties as Record<string, { $ref?: string }>)
        .map((p) => p.$ref)
        .filter(Boolean) as string[];
      if (event === 'customer.deleted') expect(data.required).toEqual(['customerId']);
      else expect(refs.length, event).toBeGreaterThan(0);
      for (const ref of refs) expect(doc.components.schemas[ref.split('/').pop() as string], ref).toBeDefined();
    }
    // The same schema as the REST answer, not a copy that drifts.
    const { title: _t, ...customer } = doc.components.schemas.Customer;
    expect(customer).toEqual(
      doc.paths['/api/customers/{id}'].get.responses['200'].content['application/json'].schema.properties.data,
    );
    expect(doc.components.schemas.InvoicePaidEvent.allOf[1].properties.data.properties.invoice.$ref).toBe(
      '#/components/schemas/InvoiceDetail',
    );
  });
});

describe('OpenAPI completeness check', () => {
  it('fails for a route a module adds without a schema, hidden, or without a summary', async () => {
    const h = await createHarness(
      {},
      {
        extraRoutes: (app) => {
          app.get('/api/undocumented', async () => ({ data: 1 }));
          app.get('/api/hidden', { schema: { hide: true, response: { 200: Type.Any() } } }, async () => ({ data: 1 }));
          app.post('/api/nosummary/:id', { schema: { tags: ['x'], response: { 201: Type.Any() } } }, async () => ({
            data: 1,
          }));
        },
      },
    );
    try {
      expect(openApiProblems(h.app).sort()).toEqual(
        [
          'GET /api/hidden: hidden from the document',
          'GET /api/hidden: missing from /openapi.json',
          'GET /api/undocumented: no success response schema',
          'GET /api/undocumented: no summary',
          'GET /api/undocumented: no description',
          'GET /api/undocumented: no tags',
          'POST /api/nosummary/:id: no summary',
          'POST /api/nosummary/:id: no description',
        ].sort(),
      );
    } finally {
      await h.close();
    }
  });
});
