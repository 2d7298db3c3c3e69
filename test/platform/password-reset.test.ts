import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailJobs, verifications } from '../../src/db/schema/index.js';
import { createHarness, type Harness, newTenant, signUp, type TestUser } from '../harness.js';

/**
 * Password reset by mail (issue 48): Better Auth's reset flow, the mail queued in the user's
 * organization's outbox, tokens single-use and expiring, the same answer for every address.
 */
describe('password reset by mail', () => {
  let h: Harness;
  let owner: TestUser;
  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h, { name: 'Acme Lawn' });
  });
  afterAll(async () => h?.close());

  const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
    h.app.inject({ method: 'POST', url, payload: payload as object, headers });

  /** The token of the newest reset mail to `email`, read from its link. */
  async function tokenMailedTo(email: string): Promise<string> {
    const rows = await h.admin.db
      .select()
      .from(mailJobs)
      .where(and(eq(mailJobs.documentType, 'account'), eq(mailJobs.organizationId, owner.organizationId)));
    const mine = rows.filter((r) => r.to.includes(email)).sort((a, b) => +b.createdAt - +a.createdAt)[0];
    const token = /\/app\/reset-password\?token=([^\s"&]+)/.exec(mine?.body ?? '')?.[1];
    if (!token) throw new Error(`no reset mail to ${email}`);
    return decodeURIComponent(token);
  }

  it('mails a known address a single-use link through the outbox, naming the business', async () => {
    const res = await post('/api/auth/request-password-reset', { email: owner.email.toUpperCase() });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.status).toBe(true);
    const [mail] = await h.admin.db
      .select()
      .from(mailJobs)
      .where(and(eq(mailJobs.documentType, 'account'), eq(mailJobs.documentId, owner.userId)));
    expect(mail?.to).toEqual([owner.email]);
    expect(mail?.subject).toBe('Reset your password (Acme Lawn)');
    expect(mail?.status).toBe('pending');
    expect(mail?.html).toMatch(/<a href="http:\/\/localhost:\d+\/app\/reset-password\?token=/);
    const token = await tokenMailedTo(owner.email);
    // Kept hashed: the token in the mail is not what the database holds.
    const stored = await h.admin.db.select({ identifier: verifications.identifier }).from(verifications);
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.some((v) => v.identifier.includes(token))).toBe(false);

    const done = await post('/api/auth/reset-password', { token, newPassword: 'a brand new secret' });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json().data).toEqual({ status: true });

    // Every session ended; the new password signs in, the old one does not.
    expect((await owner.call('GET', '/api/customers')).statusCode).toBe(401);
    const old = await post('/api/auth/sign-in/email', { email: owner.email, password: 'correct horse battery' });
    expect(old.statusCode).toBe(401);
    const fresh = await post('/api/auth/sign-in/email', { email: owner.email, password: 'a brand new secret' });
    expect(fresh.statusCode, fresh.body).toBe(200);

    // Used once: the same link again is refused and changes nothing.
    const again = await post('/api/auth/reset-password', { token, newPassword: 'someone else entirely' });
    expect(again.statusCode).toBe(400);
    expect(again.json().error.message).toMatch(/invalid, expired or already used/);
    const still = await post('/api/auth/sign-in/email', { email: owner.email, password: 'a brand new secret' });
    expect(still.statusCode).toBe(200);
  });

  it('answers an unknown address exactly as a known one, and mails nothing', async () => {
    const before = (await h.admin.db.select().from(mailJobs)).length;
    const unknown = await post('/api/auth/request-password-reset', { email: 'nobody-here@example.com' });
    const known = await post('/api/auth/request-password-reset', { email: owner.email });
    expect(unknown.statusCode).toBe(200);
    expect(unknown.json()).toEqual(known.json());
    expect((await h.admin.db.select().from(mailJobs)).length).toBe(before + 1);
  });

  it('refuses an expired token', async () => {
    const user = await signUp(h.app);
    // A user in no organization yet has no outbox: the mail goes out at once (the outbox file).
    const res = await post('/api/auth/request-password-reset', { email: user.email });
    expect(res.statusCode).toBe(200);
    const rows = await h.admin.db.select().from(verifications);
    expect(rows.length).toBeGreaterThan(0);
    await h.admin.db.update(verifications).set({ expiresAt: new Date(Date.now() - 1000) });
    const mailed = (await import('node:fs')).readFileSync(h.config.mailOutboxFile as string, 'utf8');
    const token = /reset-password\?token=([^\s"&\\]+)/.exec(mailed)?.[1];
    expect(token).toBeTruthy();
    const late = await post('/api/auth/reset-password', {
      token: decodeURIComponent(token as string),
      newPassword: 'too late for this',
    });
    expect(late.statusCode).toBe(400);
  });

  it('refuses bad bodies with 400 naming the field, and floods of one address with 429', async () => {
    for (const [url, body, field] of [
      ['/api/auth/request-password-reset', {}, 'email'],
      ['/api/auth/request-password-reset', { email: 'not an email' }, 'email'],
      ['/api/auth/request-password-reset', { email: owner.email, redirectTo: 'https://evil.example' }, 'redirectTo'],
      ['/api/auth/reset-password', { token: 'x' }, 'newPassword'],
      ['/api/auth/reset-password', { token: 'x', newPassword: 'short' }, 'newPassword'],
      ['/api/auth/reset-password', { newPassword: 'long enough here' }, 'token'],
    ] as const) {
      const res = await post(url, body);
      expect(res.statusCode, `${url} ${JSON.stringify(body)}`).toBe(400);
      expect(res.body).toContain(field);
    }
    const wrong = await post('/api/auth/reset-password', { token: 'forged-token', newPassword: 'long enough here' });
    expect(wrong.statusCode).toBe(400);

    const email = `flood-${Date.now()}@example.com`;
    const codes: number[] = [];
    for (let i = 0; i < 5; i++) codes.push((await post('/api/auth/request-password-reset', { email })).statusCode);
    expect(codes.slice(0, 3)).toEqual([200, 200, 200]);
    expect(codes.slice(3)).toEqual([429, 429]);
    // Another address is not held up by the flood.
    const other = await post('/api/auth/request-password-reset', { email: `other-${Date.now()}@example.com` });
    expect(other.statusCode).toBe(200);
  });
});
