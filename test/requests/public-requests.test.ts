import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { altchaSpent, mailJobs, requests } from '../../src/db/schema/index.js';
import { newChallenge } from '../../src/modules/requests/requests.altcha.js';
import { PER_ORGANIZATION } from '../../src/modules/requests/requests.public.js';
import { today } from '../../src/platform/dates.js';
import { countRows, eventsDuring } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { nextAddress, postRequest, solve, solvedField } from './helpers.js';

describe('requests from the public: the booking slug, the spam checks and the validation', () => {
  let h: Harness;
  let owner: TestUser;
  let other: TestUser;
  let mowing: string;
  let hidden: string;
  const slug = `green-${process.pid}`;

  const valid = (altcha: string, extra: Record<string, unknown> = {}) => ({
    firstName: 'Robin',
    lastName: 'Ash',
    email: 'robin@example.com',
    address: { street: '12 Elm Street', city: 'Springfield', state: 'IL', zip: '62704' },
    serviceIds: [mowing],
    description: 'Can you mow my lawn, Fridays if possible?',
    preferredDates: [today('UTC'), '2099-06-01'],
    preferredTime: 'morning',
    altcha,
    ...extra,
  });

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    other = await newTenant(h);
    const svc = await owner.call('POST', '/api/services', { name: 'Weekly mowing', unitPrice: 45, bookable: true });
    expect(svc.statusCode, svc.body).toBe(201);
    expect(svc.json().data.bookable).toBe(true);
    mowing = svc.json().data.id;
    hidden = (await owner.call('POST', '/api/services', { name: 'Internal', unitPrice: 1 })).json().data.id;
    const set = await owner.call('PATCH', '/api/settings', { bookingSlug: slug, timezone: 'UTC' });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().data.bookingSlug).toBe(slug);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('bookingSlug: pattern, unique among organizations (409), null switches the form off', async () => {
    for (const bad of ['ab', 'Upper', 'has space', 'x'.repeat(41), 'under_score']) {
      expect((await other.call('PATCH', '/api/settings', { bookingSlug: bad })).statusCode, bad).toBe(400);
    }
    const taken = await other.call('PATCH', '/api/settings', { bookingSlug: slug });
    expect(taken.statusCode, taken.body).toBe(409);
    expect((await other.call('GET', '/api/settings')).json().data.bookingSlug).toBeNull();
    const own = await other.call('PATCH', '/api/settings', { bookingSlug: `other-${process.pid}` });
    expect(own.statusCode, own.body).toBe(200);
    // Setting the same slug again is no change.
    expect((await other.call('PATCH', '/api/settings', { bookingSlug: `other-${process.pid}` })).statusCode).toBe(200);
    expect((await h.app.inject({ method: 'GET', url: `/api/public/other-${process.pid}/challenge` })).statusCode).toBe(
      200,
    );
    expect((await other.call('PATCH', '/api/settings', { bookingSlug: null })).statusCode).toBe(200);
    // Switched off and never known: the same answer, word for word.
    const off = await h.app.inject({ method: 'GET', url: `/api/public/other-${process.pid}/challenge` });
    const unknown = await h.app.inject({ method: 'GET', url: '/api/public/no-such-form/challenge' });
    expect(off.statusCode).toBe(404);
    expect(unknown.statusCode).toBe(404);
    expect(off.json().error.message).toBe(unknown.json().error.message);
    const offPost = await postRequest(h, `other-${process.pid}`, valid('x'));
    const unknownPost = await postRequest(h, 'no-such-form', valid('x'));
    expect([offPost.statusCode, unknownPost.statusCode]).toEqual([404, 404]);
    expect(offPost.json().error.message).toBe(unknownPost.json().error.message);
    // The freed slug can be taken by another organization.
    const freed = await other.call('PATCH', '/api/settings', { bookingSlug: `other-${process.pid}` });
    expect(freed.statusCode).toBe(200);
    await other.call('PATCH', '/api/settings', { bookingSlug: null });
  });

  it('a solved challenge stores the request once: 201 {id, status} only; solved twice → 400', async () => {
    const altcha = await solvedField(h, slug);
    const during = await eventsDuring(h, owner.organizationId, async () => {
      const res = await postRequest(h, slug, valid(altcha, { smsConsent: true }));
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toEqual({ data: { id: expect.stringMatching(/^req_/), status: 'new' } });
    });
    expect(during.map((e) => e.type)).toEqual(['request.created']);
    const again = await postRequest(h, slug, valid(altcha));
    expect(again.statusCode).toBe(400);
    expect(again.json().error.message).toMatch(/altcha.*already used/);
    const stored = await owner.call('GET', '/api/requests', undefined, { query: { status: 'new' } });
    const [row] = stored.json().data;
    expect(row).toMatchObject({
      firstName: 'Robin',
      serviceIds: [mowing],
      preferredTime: 'morning',
      smsConsent: true,
      smsConsentEvidence: { ip: expect.any(String), wording: expect.stringContaining('STOP') },
    });
  });

  it('missing, forged, foreign, expired ALTCHA → 400, nothing stored', async () => {
    const before = await countRows(h, requests, owner.organizationId);
    const { altcha: _drop, ...missing } = valid('x');
    expect((await postRequest(h, slug, missing)).statusCode).toBe(400);
    expect((await postRequest(h, slug, valid('not base64 !'))).statusCode).toBe(400);
    expect((await postRequest(h, slug, valid(Buffer.from('{"a":1}').toString('base64')))).statusCode).toBe(400);
    // Forged: a real solution whose challenge was edited (a later expiry) no longer matches its signature.
    const real = JSON.parse(Buffer.from(await solvedField(h, slug), 'base64').toString());
    real.challenge.parameters.expiresAt += 3600;
    const forged = await postRequest(h, slug, valid(Buffer.from(JSON.stringify(real)).toString('base64')));
    expect(forged.statusCode).toBe(400);
    expect(forged.json().error.details[0].field).toBe('altcha');
    // A made-up key for a genuine challenge (the key is the proof of work).
    const wrong = JSON.parse(Buffer.from(await solvedField(h, slug), 'base64').toString());
    wrong.solution.derivedKey = wrong.solution.derivedKey.replace(/^./, (c: string) => (c === '0' ? '1' : '0'));
    expect((await postRequest(h, slug, valid(Buffer.from(JSON.stringify(wrong)).toString('base64')))).statusCode).toBe(
      400,
    );
    // Another organization's challenge (signed with its own key).
    const foreign = await solve(await newChallenge(h.config.authSecret, other.organizationId));
    expect((await postRequest(h, slug, valid(foreign))).statusCode).toBe(400);
    // Expired: made eleven minutes ago with the organization's own key.
    const old = await solve(await newChallenge(h.config.authSecret, owner.organizationId, Date.now() - 11 * 60_000));
    const expired = await postRequest(h, slug, valid(old));
    expect(expired.statusCode).toBe(400);
    expect(expired.json().error.message).toMatch(/expired/);
    expect(await countRows(h, requests, owner.organizationId)).toBe(before);
  });

  it('a filled honeypot answers 201 and stores, mails and emits nothing', async () => {
    const before = await countRows(h, requests, owner.organizationId);
    const spent = await countRows(h, altchaSpent, owner.organizationId);
    const during = await eventsDuring(h, owner.organizationId, async () => {
      const res = await postRequest(h, slug, valid('x', { website: 'http://spam.example' }));
      expect(res.statusCode).toBe(201);
      expect(res.json().data).toEqual({ id: expect.stringMatching(/^req_/), status: 'new' });
    });
    expect(during).toEqual([]);
    expect(await countRows(h, requests, owner.organizationId)).toBe(before);
    expect(await countRows(h, altchaSpent, owner.organizationId)).toBe(spent);
  });

  it('every field wrong in turn → 400 naming it; never a 500', async () => {
    const altcha = await solvedField(h, slug);
    const cases: Array<[string, Record<string, unknown>]> = [
      ['firstName empty', { firstName: '' }],
      ['firstName blank', { firstName: '   ' }],
      ['firstName too long', { firstName: 'x'.repeat(101) }],
      ['firstName wrong type', { firstName: 42 }],
      ['lastName too long', { lastName: 'x'.repeat(101) }],
      ['email malformed', { email: 'not-an-email' }],
      ['email too long', { email: `${'x'.repeat(250)}@example.com` }],
      ['no email nor phone', { email: undefined }],
      ['phone letters', { email: undefined, phone: 'call me' }],
      ['phone too short', { email: undefined, phone: '12' }],
      ['address missing', { address: undefined }],
      ['street empty', { address: { street: '', city: 'Springfield' } }],
      ['city missing', { address: { street: '1 A St' } }],
      ['address unknown field', { address: { street: '1 A St', city: 'X', country: 'US' } }],
      ['serviceIds foreign', { serviceIds: ['svc_nope'] }],
      ['serviceIds not bookable', { serviceIds: [hidden] }],
      ['serviceIds wrong type', { serviceIds: 'svc_x' }],
      ['description empty', { description: '' }],
      ['description too long', { description: 'x'.repeat(2001) }],
      ['preferredDates past', { preferredDates: ['2020-01-01'] }],
      ['preferredDates four', { preferredDates: ['2099-01-01', '2099-01-02', '2099-01-03', '2099-01-04'] }],
      ['preferredDates not a date', { preferredDates: ['2099-02-30'] }],
      ['preferredTime unknown', { preferredTime: 'night' }],
      ['smsConsent wrong type', { smsConsent: 'yes' }],
      ['unknown field', { coupon: 'FREE' }],
      ['website wrong type', { website: 5 }],
    ];
    for (const [name, change] of cases) {
      const body: Record<string, unknown> = { ...valid(altcha), ...change };
      for (const k of Object.keys(change)) if (change[k] === undefined) delete body[k];
      const res = await postRequest(h, slug, body);
      expect(res.statusCode, `${name}: ${res.body}`).toBe(400);
      expect(res.json().error.code, name).toBe('VALIDATION_FAILED');
    }
    // The solution was never spent by a refused request: it still works.
    expect((await postRequest(h, slug, valid(altcha))).statusCode).toBe(201);
  });

  it('prototype keys, 1 MB and 2 MB bodies, a JSON array: 4xx, nothing stored', async () => {
    const before = await countRows(h, requests, owner.organizationId);
    const altcha = await solvedField(h, slug);
    const proto = JSON.stringify(valid(altcha)).replace(/^\{/, '{"__proto__":{"polluted":true},');
    const res = await h.app.inject({
      method: 'POST',
      url: `/api/public/${slug}/requests`,
      payload: proto,
      headers: { 'content-type': 'application/json' },
      remoteAddress: nextAddress(),
    });
    expect(res.statusCode).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const ctorKeys = JSON.stringify({ ...valid(altcha), constructor: { prototype: { polluted: true } } });
    expect(
      (
        await h.app.inject({
          method: 'POST',
          url: `/api/public/${slug}/requests`,
          payload: ctorKeys,
          headers: { 'content-type': 'application/json' },
          remoteAddress: nextAddress(),
        })
      ).statusCode,
    ).toBe(400);
    const mb = await postRequest(h, slug, valid(altcha, { description: 'x'.repeat(1_000_000) }));
    expect(mb.statusCode).toBe(400);
    const big = await postRequest(h, slug, valid(altcha, { description: 'x'.repeat(2_000_000) }));
    expect(big.statusCode).toBe(413);
    expect((await postRequest(h, slug, [1, 2])).statusCode).toBe(400);
    expect(await countRows(h, requests, owner.organizationId)).toBe(before);
  });

  it('a flood from one address → 429 with Retry-After, while another address still gets 201', async () => {
    const flooder = nextAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await postRequest(h, slug, valid('junk'), flooder)).statusCode);
    // 5 a minute: the first five are looked at (and refused: no valid ALTCHA), the rest are turned away.
    expect(statuses.slice(0, 5)).toEqual([400, 400, 400, 400, 400]);
    expect(statuses.slice(5).every((s) => s === 429)).toBe(true);
    const limited = await postRequest(h, slug, valid('junk'), flooder);
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Refused before the body is read: broken JSON from that address is a 429 too, and a form post hears it as a page.
    const url = `/api/public/${slug}/requests`;
    const broken = await h.app.inject({
      method: 'POST',
      url,
      payload: '{not json',
      headers: { 'content-type': 'application/json' },
      remoteAddress: flooder,
    });
    expect(broken.statusCode).toBe(429);
    expect(broken.json().error.code).toBe('RATE_LIMITED');
    const page = await h.app.inject({
      method: 'POST',
      url,
      payload: 'firstName=Flo',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      remoteAddress: flooder,
    });
    expect(page.statusCode).toBe(429);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(Number(page.headers['retry-after'])).toBeGreaterThan(0);
    const ok = await postRequest(h, slug, valid(await solvedField(h, slug)), nextAddress());
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it("the caller's general budget still counts (after the address limit, which the route checks first)", async () => {
    const spent = nextAddress();
    await h.app.deps.limiters.requests.penalty(`ip:${spent}`, h.app.deps.limiters.perMinute);
    const res = await postRequest(h, slug, valid('junk'), spent);
    expect(res.statusCode).toBe(429);
    expect(res.json().error.code).toBe('RATE_LIMITED');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.headers['ratelimit-policy']).toContain(`q=${h.app.deps.limiters.perMinute}`);
    // Refused by the address limit first, a flood does not spend the caller's general budget.
    const flooder = nextAddress();
    for (let i = 0; i < 8; i++) await postRequest(h, slug, valid('junk'), flooder);
    const general = await h.app.deps.limiters.requests.get(`ip:${flooder}`);
    expect(general?.consumedPoints).toBe(5);
  });

  it('1,000 junk requests from 200 addresses store, spend, mail and emit nothing, and never answer 500', async () => {
    const before = await countRows(h, requests, owner.organizationId);
    const spent = await countRows(h, altchaSpent, owner.organizationId);
    const mails = await countRows(h, mailJobs, owner.organizationId);
    const forged = Buffer.from(
      JSON.stringify({ challenge: { algorithm: 'SHA-256' }, solution: { number: 1 } }),
    ).toString('base64');
    // What bots send: no proof of work, a forged one, the honeypot filled, wrong shapes, garbage.
    const junk: Array<() => Record<string, unknown> | string> = [
      () => valid('junk'),
      () => valid(forged),
      () => valid('x', { website: 'http://spam.example/buy-now' }),
      () => valid('junk', { email: 'not-an-email', phone: undefined }),
      () => ({ firstName: 'Bot' }),
      () => valid('junk', { description: 'x'.repeat(2_001) }),
      () => JSON.parse('{"__proto__":{"admin":true},"firstName":"Bot"}'),
      () => '{"firstName": "unterminated',
    ];
    const statuses = new Map<number, number>();
    const during = await eventsDuring(h, owner.organizationId, async () => {
      for (let i = 0; i < 1_000; i++) {
        const body = junk[i % junk.length]?.() as Record<string, unknown> | string;
        const res = await h.app.inject({
          method: 'POST',
          url: `/api/public/${slug}/requests`,
          headers: { 'content-type': 'application/json' },
          payload: typeof body === 'string' ? body : JSON.stringify(body),
          remoteAddress: `10.77.${Math.floor(i / 5 / 250)}.${(Math.floor(i / 5) % 250) + 1}`,
        });
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      }
    });
    expect(
      [...statuses.keys()].every((s) => s < 500),
      JSON.stringify([...statuses]),
    ).toBe(true);
    expect(during).toEqual([]);
    expect(await countRows(h, requests, owner.organizationId)).toBe(before);
    expect(await countRows(h, altchaSpent, owner.organizationId)).toBe(spent);
    expect(await countRows(h, mailJobs, owner.organizationId)).toBe(mails);
  });

  it('200 a day for one organization → 429 with Retry-After; other organizations are unaffected', async () => {
    const second = await newTenant(h);
    const secondSlug = `second-${process.pid}`;
    expect((await second.call('PATCH', '/api/settings', { bookingSlug: secondSlug })).statusCode).toBe(200);
    const day = h.app.deps.limiters.bucket(
      PER_ORGANIZATION.name,
      PER_ORGANIZATION.points,
      PER_ORGANIZATION.durationSec,
    );
    await day.penalty(second.organizationId, PER_ORGANIZATION.points);
    const res = await postRequest(h, secondSlug, valid(await solvedField(h, secondSlug), { serviceIds: [] }));
    expect(res.statusCode, res.body).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(60);
    expect(await countRows(h, requests, second.organizationId)).toBe(0);
    expect((await postRequest(h, slug, valid(await solvedField(h, slug)))).statusCode).toBe(201);
  });

  it('a browser form post answers a thank-you page, or a page naming the wrong field', async () => {
    const altcha = await solvedField(h, slug);
    const form = new URLSearchParams({
      firstName: 'Sam',
      email: 'sam@example.com',
      street: '3 Oak Lane',
      city: 'Springfield',
      state: '',
      description: 'Leaves, please',
      preferredDates: '',
      smsConsent: 'on',
      altcha,
      website: '',
    });
    form.append('serviceIds', mowing);
    const res = await h.app.inject({
      method: 'POST',
      url: `/api/public/${slug}/requests`,
      payload: form.toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      remoteAddress: nextAddress(),
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).toContain('Thank you');
    const bad = await h.app.inject({
      method: 'POST',
      url: `/api/public/${slug}/requests`,
      payload: new URLSearchParams({
        firstName: 'Sam',
        street: 'x',
        city: 'y',
        description: 'z',
        altcha: await solvedField(h, slug),
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      remoteAddress: nextAddress(),
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toMatch(/text\/html/);
    expect(bad.body).toContain('email');
  });
});
