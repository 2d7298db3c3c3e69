import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/client.js';
import { apiKeyCaller, cookieFrom, createHarness, type Harness, newTenant, setPlan, signUp } from '../harness.js';
import { routeSecuritySuite } from '../security.js';

describe('identity, organizations and API keys', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => h.close());

  it('signs up, signs in with the cookie, creates and lists organizations', async () => {
    const user = await signUp(h.app);
    const signIn = await h.app.inject({
      method: 'POST',
      url: '/api/auth/sign-in/email',
      payload: { email: user.email, password: 'correct horse battery' },
    });
    expect(signIn.statusCode).toBe(200);
    const setCookie = String(signIn.headers['set-cookie']);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    const cookie = cookieFrom(signIn);

    const noOrg = await h.app.inject({ method: 'GET', url: '/api/members', headers: { cookie } });
    expect(noOrg.statusCode).toBe(403);
    expect(noOrg.json().error.code).toBe('NO_ACTIVE_ORGANIZATION');

    const created = await h.app.inject({
      method: 'POST',
      url: '/api/organizations',
      headers: { cookie },
      payload: { name: 'Green Co', timezone: 'America/Chicago' },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json().data).toMatchObject({ name: 'Green Co', role: 'owner', plan: 'business', active: true });

    const list = await h.app.inject({ method: 'GET', url: '/api/organizations', headers: { cookie } });
    expect(list.json().data).toHaveLength(1);
    const members = await h.app.inject({ method: 'GET', url: '/api/members', headers: { cookie } });
    expect(members.statusCode).toBe(200);
    expect(members.json().data[0]).toMatchObject({ userId: user.userId, role: 'owner' });
  });

  it('refuses a wrong password with 401 and throttles after 10 failures per email', async () => {
    const user = await signUp(h.app);
    for (let i = 0; i < 10; i++) {
      const res = await h.app.inject({
        method: 'POST',
        url: '/api/auth/sign-in/email',
        payload: { email: user.email, password: 'wrong password' },
      });
      expect(res.statusCode).toBe(401);
    }
    const blocked = await h.app.inject({
      method: 'POST',
      url: '/api/auth/sign-in/email',
      payload: { email: user.email, password: 'correct horse battery' },
    });
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json().error.code).toBe('RATE_LIMITED');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('refuses a browser request from a foreign origin and accepts the trusted one', async () => {
    const user = await signUp(h.app);
    const foreign = await h.app.inject({
      method: 'POST',
      url: '/api/auth/sign-in/email',
      headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' },
      payload: { email: user.email, password: 'correct horse battery' },
    });
    expect(foreign.statusCode).toBe(403);
    const own = await h.app.inject({
      method: 'POST',
      url: '/api/auth/sign-in/email',
      headers: { origin: h.config.baseUrl, 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' },
      payload: { email: user.email, password: 'correct horse battery' },
    });
    expect(own.statusCode).toBe(200);
  });

  it('creates an API key shown once, authenticates with Bearer and X-API-Key, revokes at once', async () => {
    const owner = await newTenant(h);
    const key = await apiKeyCaller(h, owner);
    expect(key.key).toMatch(/^sk_/);
    const viaBearer = await key.call('GET', '/api/members');
    expect(viaBearer.statusCode).toBe(200);
    const viaHeader = await h.app.inject({ method: 'GET', url: '/api/members', headers: { 'x-api-key': key.key } });
    expect(viaHeader.statusCode).toBe(200);
    const listed = await owner.call('GET', '/api/api-keys');
    expect(JSON.stringify(listed.json())).not.toContain(key.key);
    expect(listed.json().data[0]).not.toHaveProperty('key');

    await setPlan(h, owner.organizationId, 'pro');
    const demoted = await key.call('GET', '/api/members');
    expect(demoted.statusCode).toBe(403);
    expect(demoted.json().error.code).toBe('PLAN_REQUIRED');
    await setPlan(h, owner.organizationId, 'business');

    const revoked = await owner.call('DELETE', `/api/api-keys/${key.id}`);
    expect(revoked.statusCode).toBe(204);
    expect(revoked.body).toBe('');
    const after = await key.call('GET', '/api/members');
    expect(after.statusCode).toBe(401);
  });

  it('answers 401 to a garbage key or cookie, never 500', async () => {
    for (const headers of [
      { authorization: 'Bearer sk_nope' },
      { authorization: 'Basic abc' },
      { 'x-api-key': 'x'.repeat(5000) },
      { cookie: 'better-auth.session_token=garbage.sig' },
    ]) {
      const res = await h.app.inject({ method: 'GET', url: '/api/members', headers });
      expect(res.statusCode, JSON.stringify(headers).slice(0, 50)).toBe(401);
    }
  });
});

routeSecuritySuite('identity', async (_h, owner) => {
  const key = (await owner.call('POST', '/api/api-keys', { name: 'suite' })).json().data.id;
  const inv = (await owner.call('POST', '/api/invitations', { email: 'suite@example.com', role: 'member' })).json().data
    .id;
  return [
    { method: 'GET', url: '/api/organizations' },
    { method: 'POST', url: '/api/organizations', body: { name: 'X' } },
    { method: 'POST', url: `/api/organizations/${owner.organizationId}/activate`, crossTenant: true },
    { method: 'GET', url: '/api/members' },
    { method: 'GET', url: '/api/api-keys', adminOnly: true, businessOnly: true },
    { method: 'POST', url: '/api/api-keys', body: { name: 'k' }, adminOnly: true, businessOnly: true },
    { method: 'DELETE', url: `/api/api-keys/${key}`, crossTenant: true, adminOnly: true, businessOnly: true },
    { method: 'GET', url: '/api/invitations', adminOnly: true },
    { method: 'POST', url: '/api/invitations', body: { email: 'x@example.com', role: 'member' }, adminOnly: true },
    { method: 'POST', url: `/api/invitations/${inv}/accept`, crossTenant: true },
  ];
});

describe('Better Auth extras', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => h.close());

  it("passes on Better Auth's refreshed session cookie when it extends a session", async () => {
    const owner = await newTenant(h);
    // A session 5 days into its 7: Better Auth extends it (updateAge 1 day) and re-issues the cookie.
    await h.admin.db.execute(
      sql`UPDATE sessions SET expires_at = now() + interval '2 days' WHERE user_id = ${owner.userId}`,
    );
    h.app.deps.resolver.invalidate();
    const res = await owner.call('GET', '/api/members');
    expect(res.statusCode).toBe(200);
    expect(String(res.headers['set-cookie'])).toMatch(/session_token=.*Max-Age=604800/);
    const [row] = rowsOf<{ expires_at: string }>(
      await h.admin.db.execute(sql`SELECT expires_at FROM sessions WHERE user_id = ${owner.userId}`),
    );
    expect(new Date(row?.expires_at ?? 0).getTime()).toBeGreaterThan(Date.now() + 6 * 86_400_000);
  });

  it('does not expose raw session tokens through list-sessions', async () => {
    const user = await signUp(h.app);
    const res = await h.app.inject({ method: 'GET', url: '/api/auth/list-sessions', headers: { cookie: user.cookie } });
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain(user.cookie.split('=')[1]?.split('.')[0] ?? 'never');
  });
});
