import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, cookieFrom, createHarness, type Harness, newTenant, signUp, type TestUser } from '../harness.js';

/**
 * Over real HTTP with Node's fetch: non-browser clients send no Origin (but undici does
 * send sec-fetch-mode), which Better Auth's own CSRF check would refuse.
 */
describe('identity over real HTTP', () => {
  let h: Harness;
  let base: string;
  beforeAll(async () => {
    h = await createHarness();
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => h?.close());

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  it('lets a non-browser client sign up, sign in, use the cookie and sign out', async () => {
    const email = `http-${Date.now()}@example.com`;
    const up = await post('/api/auth/sign-up/email', { name: 'Curl User', email, password: 'correct horse battery' });
    expect(up.status).toBe(200);
    expect((await up.json()).data.user.email).toBe(email);

    const wrong = await post('/api/auth/sign-in/email', { email, password: 'not the password' });
    expect(wrong.status).toBe(401);
    expect((await wrong.json()).error.code).toBe('UNAUTHENTICATED');

    const signIn = await post('/api/auth/sign-in/email', { email, password: 'correct horse battery' });
    expect(signIn.status).toBe(200);
    const setCookie = signIn.headers.getSetCookie();
    expect(setCookie.join('\n')).toMatch(/HttpOnly/i);
    expect(setCookie.join('\n')).toMatch(/SameSite=Lax/i);
    expect(setCookie.join('\n')).not.toMatch(/Secure/i); // BASE_URL is http
    const cookie = setCookie.map((c) => c.split(';')[0]).join('; ');

    const org = await post('/api/organizations', { name: 'Over HTTP' }, { cookie });
    expect(org.status).toBe(201);
    const members = await fetch(`${base}/api/members`, { headers: { cookie } });
    expect(members.status).toBe(200);
    expect(members.headers.get('x-request-id')).toMatch(/^req_/);

    const session = await fetch(`${base}/api/auth/get-session`, { headers: { cookie } });
    expect(session.status).toBe(200);
    expect((await session.json()).data.user.email).toBe(email);

    const out = await fetch(`${base}/api/auth/sign-out`, { method: 'POST', headers: { cookie } });
    expect(out.status).toBe(200);
    const after = await fetch(`${base}/api/members`, { headers: { cookie } });
    expect(after.status).toBe(401);
  });

  it('refuses a foreign browser Origin with 403 and creates nothing', async () => {
    const email = `evil-${Date.now()}@example.com`;
    const res = await post(
      '/api/auth/sign-up/email',
      { name: 'X', email, password: 'correct horse battery' },
      { origin: 'https://evil.example' },
    );
    expect(res.status).toBe(403);
    expect((await res.json()).error.code).toBe('FORBIDDEN');
    const signIn = await post('/api/auth/sign-in/email', { email, password: 'correct horse battery' });
    expect(signIn.status).toBe(401);
  });

  it('answers a duplicate sign-up with 409 CONFLICT and a short password with 400', async () => {
    const email = `dup-${Date.now()}@example.com`;
    expect(
      (await post('/api/auth/sign-up/email', { name: 'A', email, password: 'correct horse battery' })).status,
    ).toBe(200);
    const dup = await post('/api/auth/sign-up/email', { name: 'B', email, password: 'another password' });
    expect(dup.status).toBe(409);
    expect((await dup.json()).error.code).toBe('CONFLICT');
    const short = await post('/api/auth/sign-up/email', { name: 'C', email: `s${email}`, password: 'short' });
    expect(short.status).toBe(400);
    expect((await short.json()).error.details[0].field).toBe('password');
  });

  it("validates Better Auth's other routes like every route: 400 naming the field, and the user unchanged", async () => {
    const email = `upd-${Date.now()}@example.com`;
    const up = await post('/api/auth/sign-up/email', { name: 'Named', email, password: 'correct horse battery' });
    const cookie = up.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const nulls = await post('/api/auth/update-user', { name: null, image: null }, { cookie });
    expect(nulls.status).toBe(400);
    const body = await nulls.json();
    expect(body.error.code).toBe('VALIDATION_FAILED');
    expect(body.error.details[0].field).toBe('name');
    for (const [path, payload, field] of [
      ['/api/auth/change-password', { newPassword: 'long enough 1', currentPassword: null }, 'currentPassword'],
      ['/api/auth/change-email', { newEmail: 'not an email' }, 'newEmail'],
      ['/api/auth/revoke-session', { token: 42 }, 'token'],
      ['/api/auth/update-session', { activeOrganizationId: 'org_x' }, 'activeOrganizationId'],
    ] as const) {
      const res = await post(path, payload, { cookie });
      expect(res.status, path).toBe(400);
      expect((await res.json()).error.details[0].field, path).toBe(field);
    }
    const renamed = await post('/api/auth/update-user', { name: 'Renamed' }, { cookie });
    expect(renamed.status).toBe(200);
    const session = await fetch(`${base}/api/auth/get-session`, { headers: { cookie } });
    expect((await session.json()).data.user.name).toBe('Renamed');
    // Social sign-in serves no configured provider: off.
    expect((await post('/api/auth/sign-in/social', { provider: 'github' })).status).toBe(404);
  });
});

describe('session cookie over https', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ BASE_URL: 'https://crm.example.com' });
  });
  afterAll(async () => h?.close());

  it('is Secure, HttpOnly and SameSite=Lax when BASE_URL is https, and it authenticates', async () => {
    const user = await signUp(h.app);
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/auth/sign-in/email',
      payload: { email: user.email, password: 'correct horse battery' },
    });
    expect(res.statusCode).toBe(200);
    const raw = String(res.headers['set-cookie']);
    expect(raw).toMatch(/;\s*Secure/i);
    expect(raw).toMatch(/HttpOnly/i);
    expect(raw).toMatch(/SameSite=Lax/i);
    const orgs = await h.app.inject({ method: 'GET', url: '/api/organizations', headers: { cookie: cookieFrom(res) } });
    expect(orgs.statusCode).toBe(200);
  });
});

describe('organizations, members and invitations', () => {
  let h: Harness;
  let owner: TestUser;
  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h, { name: 'First' });
  });
  afterAll(async () => h?.close());

  it('switches the active organization; tenant routes follow it', async () => {
    const second = await owner.call('POST', '/api/organizations', { name: 'Second', timezone: 'America/Denver' });
    expect(second.statusCode).toBe(201);
    const secondId = second.json().data.id;
    const list = (await owner.call('GET', '/api/organizations')).json().data;
    expect(list.map((o: { name: string; active: boolean }) => [o.name, o.active])).toEqual([
      ['Second', true],
      ['First', false],
    ]);
    const activated = await owner.call('POST', `/api/organizations/${owner.organizationId}/activate`);
    expect(activated.statusCode).toBe(200);
    expect(activated.json().data).toMatchObject({ id: owner.organizationId, active: true, role: 'owner' });
    const members = await owner.call('GET', '/api/members');
    expect(members.json().data).toHaveLength(1);
    // A new sign-in starts in the organization activated last, so tenant routes work at once.
    const signIn = await h.app.inject({
      method: 'POST',
      url: '/api/auth/sign-in/email',
      payload: { email: owner.email, password: 'correct horse battery' },
    });
    const fresh = cookieFrom(signIn);
    expect(fresh).not.toBe(owner.cookie);
    const inFirst = await h.app.inject({ method: 'GET', url: '/api/organizations', headers: { cookie: fresh } });
    expect(inFirst.json().data.find((o: { active: boolean }) => o.active).id).toBe(owner.organizationId);
    expect((await h.app.inject({ method: 'GET', url: '/api/members', headers: { cookie: fresh } })).statusCode).toBe(
      200,
    );
    // Someone else's organization cannot be activated: 404 like a missing one.
    const stranger = await newTenant(h);
    const foreign = await stranger.call('POST', `/api/organizations/${secondId}/activate`);
    expect(foreign.statusCode).toBe(404);
  });

  it('invites by email; only that user can accept, once; roles are enforced', async () => {
    const invitee = await signUp(h.app, 'Invitee');
    const impostor = await signUp(h.app, 'Impostor');
    const inv = await owner.call('POST', '/api/invitations', { email: invitee.email.toUpperCase(), role: 'member' });
    expect(inv.statusCode).toBe(201);
    const { id, acceptUrl, status } = inv.json().data;
    expect(status).toBe('pending');
    expect(acceptUrl).toBe(`${h.config.baseUrl}/api/invitations/${id}/accept`);

    const byImpostor = await h.app.inject({
      method: 'POST',
      url: `/api/invitations/${id}/accept`,
      headers: { cookie: impostor.cookie },
    });
    expect(byImpostor.statusCode).toBe(404);
    const accepted = await h.app.inject({
      method: 'POST',
      url: `/api/invitations/${id}/accept`,
      headers: { cookie: invitee.cookie },
    });
    expect(accepted.statusCode).toBe(200);
    expect(accepted.json().data).toEqual({ organizationId: owner.organizationId, role: 'member' });
    const twice = await h.app.inject({
      method: 'POST',
      url: `/api/invitations/${id}/accept`,
      headers: { cookie: invitee.cookie },
    });
    expect(twice.statusCode).toBe(409);
    expect(twice.json().error.code).toBe('INVALID_STATE');

    // The new member works in the organization but may not invite or manage keys.
    const asMember = await h.app.inject({ method: 'GET', url: '/api/members', headers: { cookie: invitee.cookie } });
    expect(asMember.statusCode).toBe(200);
    expect(
      asMember
        .json()
        .data.map((m: { role: string }) => m.role)
        .sort(),
    ).toEqual(['member', 'owner']);
    const invite = await h.app.inject({
      method: 'POST',
      url: '/api/invitations',
      headers: { cookie: invitee.cookie },
      payload: { email: 'x@example.com', role: 'member' },
    });
    expect(invite.statusCode).toBe(403);
    expect(invite.json().error.code).toBe('FORBIDDEN');

    const listed = (await owner.call('GET', '/api/invitations')).json().data;
    expect(listed.find((i: { id: string }) => i.id === id).status).toBe('accepted');
  });

  it('refuses invitation roles other than admin/member and bad emails', async () => {
    for (const body of [
      { email: 'a@example.com', role: 'owner' },
      { email: 'not-an-email', role: 'member' },
      { email: 'a@example.com' },
    ]) {
      const res = await owner.call('POST', '/api/invitations', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
    }
  });

  it('an API key cannot create organizations or more API keys', async () => {
    const keyRes = await owner.call('POST', '/api/api-keys', { name: 'ci', role: 'admin' });
    const key = keyRes.json().data.key;
    const headers = { authorization: `Bearer ${key}` };
    const org = await h.app.inject({ method: 'POST', url: '/api/organizations', headers, payload: { name: 'K' } });
    expect(org.statusCode).toBe(403);
    const another = await h.app.inject({ method: 'POST', url: '/api/api-keys', headers, payload: { name: 'k2' } });
    expect(another.statusCode).toBe(403);
  });

  it('admins manage members too; a plain member sees but cannot invite', async () => {
    const admin = await addMember(h, owner, 'admin');
    const res = await admin.call('POST', '/api/invitations', { email: 'new@example.com', role: 'admin' });
    expect(res.statusCode).toBe(201);
  });
});
