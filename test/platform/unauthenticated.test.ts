import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiPathNeedsCredentials } from '../../src/platform/access.js';
import { apiKeyCaller, createHarness, type Harness, newTenant, setPlan, type TestUser } from '../harness.js';

/*
 * Spec 5.2: "All API requests except auth endpoints require authentication. When the
 * request is unauthenticated, the response status is 401." That holds before routing:
 * an unknown /api path or a method a path does not have answers 401 without credentials;
 * with them, 404 for an unknown path and 405 (with Allow) for a known path's wrong method.
 */
describe('authentication before routing under /api', () => {
  let h: Harness;
  let owner: TestUser;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
  });
  afterAll(async () => h?.close());

  const unknown = [
    ['GET', '/api/nothing-here'],
    ['GET', '/api/customers/cus_x/no-such-action'],
    ['POST', '/api/nothing-here'],
    ['DELETE', '/api/customers'], // wrong method on a real path
    ['PATCH', '/api/invoices'],
    ['GET', '/api'],
    ['GET', '/api/'],
    ['GET', '/api/nothing-here?x=1'],
    ['GET', '/api/authx'], // not under /api/auth/
    ['GET', '/api/nothing/deeper'],
  ] as const;

  it('answers 401 UNAUTHENTICATED to unknown paths and wrong methods without credentials', async () => {
    for (const [method, url] of unknown) {
      const res = await h.app.inject({ method, url });
      expect(res.statusCode, `${method} ${url}`).toBe(401);
      expect(res.json().error).toMatchObject({ code: 'UNAUTHENTICATED', requestId: res.headers['x-request-id'] });
    }
    // Bad credentials are no better than none.
    const bad = await h.app.inject({
      method: 'GET',
      url: '/api/nothing-here',
      headers: { authorization: 'Bearer sk_not_a_key' },
    });
    expect(bad.statusCode).toBe(401);
  });

  it('answers 404 NOT_FOUND (405 for a wrong method on a real path) with a session or an API key', async () => {
    await setPlan(h, owner.organizationId, 'business');
    const key = await apiKeyCaller(h, owner);
    const wrongMethod = new Set(['DELETE /api/customers', 'PATCH /api/invoices']);
    for (const [method, url] of unknown) {
      for (const call of [owner.call, key.call]) {
        const res = await call(method, url);
        if (wrongMethod.has(`${method} ${url}`)) {
          expect(res.statusCode, `${method} ${url}`).toBe(405);
          expect(res.json().error.code).toBe('METHOD_NOT_ALLOWED');
          expect(res.headers.allow).toContain('GET');
        } else {
          expect(res.statusCode, `${method} ${url}`).toBe(404);
          expect(res.json().error.code).toBe('NOT_FOUND');
        }
      }
    }
  });

  it('leaves /api/auth/*, /api/portal/*, /api/payments/stripe/* and non-API paths to their own answers', async () => {
    for (const url of [
      '/api/portal/not-a-token',
      '/api/portal/not-a-token/x/y',
      '/api/payments/stripe/webhook-not-here',
      '/nope',
      '/apix/customers',
    ]) {
      const res = await h.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).not.toBe(401);
    }
    // Auth endpoints answer for themselves: a malformed sign-up is a 400, not "sign in first".
    const signUp = await h.app.inject({ method: 'POST', url: '/api/auth/sign-up/email', payload: {} });
    expect(signUp.statusCode).toBe(400);
  });

  it('classifies paths by prefix, never by a look-alike', () => {
    expect(apiPathNeedsCredentials('/api/customers')).toBe(true);
    expect(apiPathNeedsCredentials('/api')).toBe(true);
    expect(apiPathNeedsCredentials('/api/auth')).toBe(false);
    expect(apiPathNeedsCredentials('/api/auth/sign-in/email?x=1')).toBe(false);
    expect(apiPathNeedsCredentials('/api/authority')).toBe(true);
    expect(apiPathNeedsCredentials('/api/portal/tok')).toBe(false);
    expect(apiPathNeedsCredentials('/api/portals')).toBe(true);
    expect(apiPathNeedsCredentials('/api/payments/stripe/events')).toBe(false);
    expect(apiPathNeedsCredentials('/api/payments/stripes')).toBe(true);
    // The booking form (operations.md §12): public by design, answers 404 for an unknown slug.
    expect(apiPathNeedsCredentials('/api/public/green-acres/requests')).toBe(false);
    expect(apiPathNeedsCredentials('/api/publicity')).toBe(true);
    expect(apiPathNeedsCredentials('/healthz')).toBe(false);
    expect(apiPathNeedsCredentials('/apis')).toBe(false);
  });
});
