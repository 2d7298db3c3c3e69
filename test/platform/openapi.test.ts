import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../harness.js';

/**
 * /openapi.json must describe every /api route. The list of routes comes from the
 * app itself (an onRoute hook in buildApp), so routes added by any module later are
 * checked without touching this file. Only Better Auth's catch-all passthrough is exempt.
 */
const EXEMPT = new Set(['/api/auth/*']);

type Doc = {
  paths: Record<string, Record<string, { summary?: string; tags?: string[]; responses?: Record<string, unknown> }>>;
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
    if (!op.tags?.length) problems.push(`${name}: no tags`);
    if (!op.responses?.['4XX'] && !op.responses?.['4xx']) problems.push(`${name}: error responses not documented`);
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

  it('answers 401 without credentials on every /api route except /api/auth/*, /api/portal/* and Stripe events', async () => {
    // Stripe's events carry its signature, not our credentials (test/payments/stripe.test.ts).
    const open = (url: string) =>
      url.startsWith('/api/auth/') || url.startsWith('/api/portal/') || url.startsWith('/api/payments/stripe/');
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
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiKey', 'session']);
    expect(doc.components.schemas.ErrorBody).toBeDefined();
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/auth/sign-in/email', '/api/organizations']));
    expect(Object.keys(doc.paths).some((p) => p.includes('*'))).toBe(false);
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
          'GET /api/undocumented: no tags',
          'GET /api/undocumented: error responses not documented',
          'POST /api/nosummary/:id: no summary',
        ].sort(),
      );
    } finally {
      await h.close();
    }
  });
});
