import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/client.js';
import { type PageQueryInput, pageOf, setPageHeaders } from '../../src/platform/pagination.js';
import { DateOnly, Envelope, PageQuery } from '../../src/platform/schemas.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/** Test-only routes: a failure that must not leak, and schema pieces other modules use. */
function extraRoutes(app: FastifyInstance) {
  app.get('/api/test/boom', { config: { access: 'public' } }, async () => {
    // A real driver error: its message names the table and the SQL.
    await app.deps.database.db.execute(sql`SELECT secret_column FROM no_such_table_xyz`);
    return { data: null };
  });
  app.get('/api/test/throw', { config: { access: 'public' } }, async () => {
    const err = new Error('password=hunter2 at /srv/app/src/secret.ts:12');
    throw err;
  });
  app.post(
    '/api/test/dates',
    {
      config: { access: 'public' },
      schema: {
        body: Type.Object({ on: DateOnly(), count: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
        response: { 200: Envelope(Type.Object({ on: Type.String() })) },
      },
    },
    async (request) => ({ data: { on: (request.body as { on: string }).on } }),
  );
  app.get(
    '/api/test/pages',
    {
      config: { access: 'public' },
      schema: {
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: Type.Object({ data: Type.Unknown() }) },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query as PageQueryInput);
      setPageHeaders(request, reply, page, { hasMore: page.page * page.limit < 120, total: 120 });
      return { data: page };
    },
  );
}

const leaks = (body: string) => {
  expect(body).not.toMatch(/no_such_table|secret_column|SELECT|hunter2|secret\.ts|\n\s+at /);
};

describe('API conventions', () => {
  let h: Harness;
  let owner: TestUser;
  beforeAll(async () => {
    h = await createHarness({}, { extraRoutes });
    owner = await newTenant(h);
  });
  afterAll(async () => h?.close());

  const orgCount = async () =>
    rowsOf<{ n: number }>(await h.admin.db.execute(sql`SELECT count(*)::int AS n FROM organizations`))[0]?.n;

  it('answers /healthz and /readyz without auth, and every response carries X-Request-Id', async () => {
    const health = await h.app.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: 'ok' });
    expect(health.headers['x-request-id']).toMatch(/^req_/);
    const ready = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json().status).toBe('ready');
    expect(ready.json().migrations).toBeGreaterThan(0);
  });

  it('echoes a well-formed X-Request-Id and replaces a malformed one', async () => {
    const echoed = await h.app.inject({ method: 'GET', url: '/api/members', headers: { 'x-request-id': 'abc-123' } });
    expect(echoed.headers['x-request-id']).toBe('abc-123');
    expect(echoed.json().error.requestId).toBe('abc-123');
    for (const bad of ['x'.repeat(300), 'has space', 'semi;colon']) {
      const res = await h.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': bad } });
      expect(res.headers['x-request-id']).toMatch(/^req_/);
    }
  });

  it('answers 404 NOT_FOUND in the error shape for unknown routes', async () => {
    for (const url of ['/api/nothing-here', '/nope', '/api/members/extra/segments']) {
      // Under /api only a caller with credentials learns that a path does not exist (else 401).
      const res = url.startsWith('/api/') ? await owner.call('GET', url) : await h.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json().error).toMatchObject({ code: 'NOT_FOUND', requestId: res.headers['x-request-id'] });
    }
  });

  it('answers 401 on /api routes without credentials, but not on /api/auth/* or /api/portal/*', async () => {
    for (const [method, url] of [
      ['GET', '/api/members'],
      ['GET', '/api/organizations'],
      ['POST', '/api/organizations'],
      ['GET', '/api/invitations'],
      ['DELETE', '/api/api-keys/key_x'],
    ] as const) {
      const res = await h.app.inject({ method, url, ...(method === 'POST' ? { payload: {} } : {}) });
      expect(res.statusCode, url).toBe(401);
      expect(res.json().error.code).toBe('UNAUTHENTICATED');
    }
    const portal = await h.app.inject({ method: 'GET', url: '/api/portal/not-a-token' });
    expect(portal.statusCode).not.toBe(401);
    const signIn = await h.app.inject({
      method: 'POST',
      url: '/api/auth/sign-in/email',
      payload: { email: 'nobody@example.com', password: 'whatever1' },
    });
    expect(signIn.statusCode).toBe(401); // wrong credentials, not "sign in first"
    expect(signIn.json().error.code).toBe('UNAUTHENTICATED');
  });

  it('turns a driver error and a thrown Error into a bare 500 INTERNAL: no stack, no SQL', async () => {
    for (const url of ['/api/test/boom', '/api/test/throw']) {
      const res = await h.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(500);
      expect(res.json()).toEqual({
        error: { message: 'Internal server error', code: 'INTERNAL', requestId: res.headers['x-request-id'] },
      });
      leaks(res.body);
    }
  });

  it('refuses text/plain with 415, over 1 MiB with 413, malformed JSON with 400; nothing is written', async () => {
    const before = await orgCount();
    const plain = await owner.call('POST', '/api/organizations', undefined, {
      headers: { 'content-type': 'text/plain' },
    });
    const plainWithBody = await h.app.inject({
      method: 'POST',
      url: '/api/organizations',
      headers: { cookie: owner.cookie, 'content-type': 'text/plain' },
      payload: 'name=x',
    });
    for (const res of [plain, plainWithBody]) {
      expect(res.statusCode).toBe(415);
      expect(res.json().error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    }
    const form = await h.app.inject({
      method: 'POST',
      url: '/api/organizations',
      headers: { cookie: owner.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=x',
    });
    expect(form.statusCode).toBe(415);

    const huge = await h.app.inject({
      method: 'POST',
      url: '/api/organizations',
      headers: { cookie: owner.cookie, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }),
    });
    expect(huge.statusCode).toBe(413);
    expect(huge.json().error.code).toBe('PAYLOAD_TOO_LARGE');

    for (const payload of ['{"name": "x",', '{name: x}', 'null x', '\u0000']) {
      const res = await h.app.inject({
        method: 'POST',
        url: '/api/organizations',
        headers: { cookie: owner.cookie, 'content-type': 'application/json' },
        payload,
      });
      expect(res.statusCode, payload).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_FAILED');
      leaks(res.body);
    }
    expect(await orgCount()).toBe(before);
  });

  it('refuses unknown fields and wrong types with 400 and one detail per field; nothing is written', async () => {
    const before = await orgCount();
    const unknown = await owner.call('POST', '/api/organizations', { name: 'X', plan: 'business', id: 'org_mine' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.code).toBe('VALIDATION_FAILED');
    const fields = unknown.json().error.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['plan', 'id']));
    for (const d of unknown.json().error.details) expect(d.message).toBe('is not an accepted field');

    const wrongType = await owner.call('POST', '/api/organizations', { name: 5 });
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json().error.details).toEqual([{ field: 'name', message: expect.stringMatching(/string/) }]);

    const missing = await owner.call('POST', '/api/organizations', {});
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error.details).toEqual([{ field: 'name', message: 'is required' }]);

    const notObject = await owner.call('POST', '/api/organizations', [1, 2]);
    expect(notObject.statusCode).toBe(400);

    const blank = await owner.call('POST', '/api/organizations', { name: '   ' });
    expect(blank.statusCode).toBe(400);
    expect(blank.json().error.details[0].field).toBe('name');

    const badZone = await owner.call('POST', '/api/organizations', { name: 'Z', timezone: 'Mars/Olympus' });
    expect(badZone.statusCode).toBe(400);
    expect(badZone.json().error.details).toEqual([{ field: 'timezone', message: expect.any(String) }]);
    expect(await orgCount()).toBe(before);
  });

  it('validates dates strictly and never coerces body types', async () => {
    const ok = await h.app.inject({ method: 'POST', url: '/api/test/dates', payload: { on: '2028-02-29', count: 1 } });
    expect(ok.statusCode).toBe(200);
    for (const on of ['2027-02-29', '2026-13-01', '2026-1-1', '01/02/2026', '2026-01-01T00:00:00Z', '']) {
      const res = await h.app.inject({ method: 'POST', url: '/api/test/dates', payload: { on, count: 1 } });
      expect(res.statusCode, on).toBe(400);
      expect(res.json().error.details[0].field).toBe('on');
    }
    const coerced = await h.app.inject({
      method: 'POST',
      url: '/api/test/dates',
      payload: { on: '2026-01-01', count: '1' },
    });
    expect(coerced.statusCode).toBe(400);
    expect(coerced.json().error.details[0].field).toBe('count');
  });

  it('validates page and limit (1..100) and sets X-Total-Count and Link', async () => {
    for (const q of ['page=0', 'limit=0', 'limit=101', 'limit=abc', 'page=-1', 'page=1.5']) {
      const res = await h.app.inject({ method: 'GET', url: `/api/test/pages?${q}` });
      expect(res.statusCode, q).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_FAILED');
    }
    const res = await h.app.inject({ method: 'GET', url: '/api/test/pages?page=2&limit=50' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ page: 2, limit: 50, offset: 50, includeTotal: false });
    expect(res.headers['x-total-count']).toBe('120');
    expect(res.headers.link).toContain('</api/test/pages?page=3&limit=50>; rel="next"');
    expect(res.headers.link).toContain('</api/test/pages?page=1&limit=50>; rel="prev"');
    const dflt = await h.app.inject({ method: 'GET', url: '/api/test/pages' });
    expect(dflt.json().data).toEqual({ page: 1, limit: 50, offset: 0, includeTotal: false });
    for (const q of ['includeTotal=maybe', 'page=2&startingAfter=cus_x', 'startingAfter=', 'page=1e309']) {
      const bad = await h.app.inject({ method: 'GET', url: `/api/test/pages?${q}` });
      expect(bad.statusCode, q).toBe(400);
      expect(bad.json().error.code, q).toBe('VALIDATION_FAILED');
    }
  });

  it('accepts an action route with no body and no Content-Type, or an empty JSON object', async () => {
    const bare = await h.app.inject({
      method: 'POST',
      url: `/api/organizations/${owner.organizationId}/activate`,
      headers: { cookie: owner.cookie },
    });
    expect(bare.statusCode).toBe(200);
    const empty = await owner.call('POST', `/api/organizations/${owner.organizationId}/activate`, {});
    expect(empty.statusCode).toBe(200);
    const emptyJson = await h.app.inject({
      method: 'POST',
      url: `/api/organizations/${owner.organizationId}/activate`,
      headers: { cookie: owner.cookie, 'content-type': 'application/json' },
      payload: '',
    });
    expect(emptyJson.statusCode).toBe(200);
  });

  it('answers bad ids with 400 (too long) or 404 (unknown), never 500', async () => {
    const long = await owner.call('POST', `/api/organizations/${'o'.repeat(65)}/activate`);
    expect(long.statusCode).toBe(400);
    for (const id of ['org_nope', "org_'%3B--", '%F0%9F%92%A9', 'null']) {
      const res = await owner.call('POST', `/api/organizations/${id}/activate`);
      expect(res.statusCode, id).toBe(404);
      expect(res.json().error.code).toBe('NOT_FOUND');
    }
    // Refused by the router before any route runs, yet in the error shape like any bad input.
    const badEncoding = await owner.call('DELETE', '/api/api-keys/%E0%A4%A');
    expect(badEncoding.statusCode).toBe(400);
    expect(badEncoding.json().error).toMatchObject({ code: 'VALIDATION_FAILED', requestId: expect.any(String) });
    const tooLong = await owner.call('GET', `/api/customers/${'c'.repeat(300)}`);
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json().error).toMatchObject({ code: 'VALIDATION_FAILED', requestId: expect.any(String) });
  });

  it('answers bad cookies and keys with 401, never 500', async () => {
    for (const headers of [
      { cookie: 'better-auth.session_token=' },
      { cookie: 'better-auth.session_token=%%%; other=1' },
      { cookie: `better-auth.session_token=${'a'.repeat(4000)}` },
      { authorization: 'Bearer' },
      { authorization: 'Bearer sk_' },
      { authorization: `Bearer sk_${'A'.repeat(43)}` },
      { authorization: 'Bearer a b c' },
      { 'x-api-key': 'sk_ünïcode' },
    ]) {
      const res = await h.app.inject({ method: 'GET', url: '/api/members', headers });
      expect(res.statusCode, JSON.stringify(headers).slice(0, 60)).toBe(401);
      expect(res.json().error.code).toBe('UNAUTHENTICATED');
    }
  });

  it('keeps CORS closed when CORS_ORIGINS is unset', async () => {
    const preflight = await h.app.inject({
      method: 'OPTIONS',
      url: '/api/members',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
    });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    const simple = await owner.call('GET', '/api/members', undefined, { headers: { origin: 'https://evil.example' } });
    expect(simple.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('serves the OpenAPI 3.1 document and /docs with assets from this server', async () => {
    const doc = await h.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(doc.statusCode).toBe(200);
    expect(doc.json().openapi).toBe('3.1.0');
    const page = await h.app.inject({ method: 'GET', url: '/docs' });
    const html =
      page.statusCode === 302 ? await h.app.inject({ method: 'GET', url: page.headers.location as string }) : page;
    expect(html.statusCode).toBe(200);
    expect(html.headers['content-type']).toMatch(/text\/html/);
    const assets = [...html.body.matchAll(/(?:src|href)="([^"]+\.(?:js|css))"/g)].map((m) => m[1] as string);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const asset of assets) {
      expect(asset, 'assets must not come from a CDN').not.toMatch(/^(https?:)?\/\//);
      const url = new URL(asset, 'http://localhost/docs/').pathname;
      const res = await h.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.body.length).toBeGreaterThan(100);
    }
    // The UI's initializer must point at this server's document.
    const init = await h.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    expect(init.statusCode).toBe(200);
    const json = await h.app.inject({ method: 'GET', url: '/docs/json' });
    expect(json.statusCode).toBe(200);
    expect(json.json().openapi).toBe('3.1.0');
  });
});

describe('CORS with CORS_ORIGINS', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ CORS_ORIGINS: 'https://office.example' });
  });
  afterAll(async () => h?.close());

  it('allows only the listed origin, with credentials', async () => {
    const ok = await h.app.inject({
      method: 'OPTIONS',
      url: '/api/members',
      headers: { origin: 'https://office.example', 'access-control-request-method': 'GET' },
    });
    expect(ok.headers['access-control-allow-origin']).toBe('https://office.example');
    expect(ok.headers['access-control-allow-credentials']).toBe('true');
    const other = await h.app.inject({
      method: 'OPTIONS',
      url: '/api/members',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
    });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('logs', () => {
  it('writes JSON lines carrying the request id, with the error detail a 500 body leaves out', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logStream = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const h = await createHarness({ LOG_LEVEL: 'info' }, { extraRoutes, logStream });
    try {
      const res = await h.app.inject({
        method: 'GET',
        url: '/api/test/throw',
        headers: { 'x-request-id': 'log-test-1', authorization: 'Bearer sk_secret_value_123' },
      });
      expect(res.statusCode).toBe(500);
      const mine = lines.filter((l) => l.reqId === 'log-test-1');
      expect(mine.map((l) => l.msg)).toEqual(['incoming request', 'unhandled error', 'request completed']);
      const error = mine.find((l) => l.msg === 'unhandled error') as { err: { message: string; stack: string } };
      expect(error.err.message).toContain('hunter2');
      expect(error.err.stack).toContain('conventions.test.ts');
      expect(JSON.stringify(lines)).not.toContain('sk_secret_value_123');
    } finally {
      await h.close();
    }
  });
});
