import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/client.js';
import { findNul, jsonTooDeep, MAX_JSON_DEPTH } from '../../src/platform/input-guard.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/** The input rules of README › Conventions: NUL, nesting depth, finite bounded numbers, own keys only. */
describe('input rules', () => {
  let h: Harness;
  let owner: TestUser;
  let customerId: string;
  let portalPath: string;

  const customerCount = async () =>
    rowsOf<{ n: number }>(await h.admin.db.execute(sql`SELECT count(*)::int AS n FROM customers`))[0]?.n;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    customerId = (await owner.call('POST', '/api/customers', { firstName: 'Nul', email: 'n@example.com' })).json().data
      .id;
    const estimate = await owner.call('POST', '/api/estimates', {
      customerId,
      lineItems: [{ description: 'Mow', quantity: 1, unitPrice: 40 }],
    });
    const sent = await owner.call('POST', `/api/estimates/${estimate.json().data.id}/send`);
    portalPath = new URL(sent.json().data.portalUrl).pathname;
  });
  afterAll(async () => h?.close());

  it('refuses NUL in body strings, nested fields, keys, path ids and query values, naming the field', async () => {
    const before = await customerCount();
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', '/api/customers', { firstName: 'A\u0000B', email: 'a@example.com' }, 'firstName'],
      ['POST', '/api/customers', { firstName: 'A', tags: ['ok', 'b\u0000'] }, 'tags.1'],
      ['POST', '/api/customers', { firstName: 'A', 'x\u0000': 1 }, 'x\\0'],
      ['PATCH', `/api/customers/${customerId}`, { notes: '\u0000' }, 'notes'],
      ['GET', `/api/customers/cus_${encodeURIComponent('\u0000')}`, undefined, 'id'],
      ['GET', `/api/customers?search=${encodeURIComponent('a\u0000')}`, undefined, 'search'],
    ];
    for (const [method, url, body, field] of cases) {
      const res = await owner.call(method, url, body);
      expect(res.statusCode, `${method} ${url}`).toBe(400);
      expect(res.json().error).toMatchObject({
        code: 'VALIDATION_FAILED',
        details: [{ field, message: 'must not contain a NUL character' }],
      });
    }
    // Sign-up is Better Auth's: the rule holds there too, before Better Auth sees the body.
    const signUp = await h.app.inject({
      method: 'POST',
      url: '/api/auth/sign-up/email',
      payload: { name: 'N\u0000', email: 'nul@example.com', password: 'correct horse battery' },
    });
    expect(signUp.statusCode).toBe(400);
    expect(signUp.json().error.details).toEqual([{ field: 'name', message: 'must not contain a NUL character' }]);
    expect(await customerCount()).toBe(before);
  });

  it(`accepts JSON nested ${MAX_JSON_DEPTH} deep and refuses one level more, on Better Auth routes too`, async () => {
    const nested = (depth: number) => `${'['.repeat(depth - 1)}{"firstName":"Deep"}${']'.repeat(depth - 1)}`;
    // 64 levels parse (the body is then refused by its schema: it is an array, not an object).
    const at = await h.app.inject({
      method: 'POST',
      url: '/api/customers',
      headers: { cookie: owner.cookie, 'content-type': 'application/json' },
      payload: nested(MAX_JSON_DEPTH),
    });
    expect(at.statusCode).toBe(400);
    expect(at.json().error.message).not.toMatch(/deeper/);
    for (const url of ['/api/customers', '/api/auth/forget-password', '/api/auth/change-password']) {
      for (const payload of [
        nested(MAX_JSON_DEPTH + 1),
        '['.repeat(100_000),
        `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`,
      ]) {
        const res = await h.app.inject({
          method: 'POST',
          url,
          headers: { cookie: owner.cookie, 'content-type': 'application/json' },
          payload,
        });
        expect(res.statusCode, url).toBe(400);
        expect(res.json().error).toMatchObject({
          code: 'VALIDATION_FAILED',
          message: 'Body nests deeper than 64 levels',
        });
      }
    }
  });

  it('counts depth on the raw text: brackets inside strings and escapes do not count', () => {
    expect(jsonTooDeep('[[1]]', 2)).toBe(false);
    expect(jsonTooDeep('[[[1]]]', 2)).toBe(true);
    expect(jsonTooDeep('{"a":"[[[[[{{{{"}', 2)).toBe(false);
    expect(jsonTooDeep('{"a":"\\"[[[[\\\\"}', 1)).toBe(false);
    expect(jsonTooDeep('[{},{},{},[]]', 2)).toBe(false);
    expect(findNul({ a: [{ b: 'ok' }, { c: 'x\u0000' }] })).toBe('a.1.c');
    expect(findNul({ a: 'fine', b: [1, null, true] })).toBeUndefined();
    expect(findNul('\u0000')).toBe('');
  });

  it('keeps numeric query values finite and bounded', async () => {
    for (const q of [
      'page=1e309',
      'page=-1e309',
      'page=Infinity',
      'page=10000001',
      'limit=1e309',
      'page=9223372036854775808',
    ]) {
      const res = await owner.call('GET', `/api/customers?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_FAILED');
    }
    expect((await owner.call('GET', '/api/customers?page=1e309')).json().error.details).toEqual([
      { field: 'page', message: 'must be a finite number' },
    ]);
    const last = await owner.call('GET', '/api/customers?page=10000000');
    expect(last.statusCode).toBe(200);
    expect(last.json().data).toEqual([]);
    // A JSON body's 1e309 parses to Infinity: refused as a number, never stored.
    const body = await h.app.inject({
      method: 'POST',
      url: '/api/services',
      headers: { cookie: owner.cookie, 'content-type': 'application/json' },
      payload: '{"name":"Inf","unitPrice":1e309}',
    });
    expect(body.statusCode).toBe(400);
  });

  it('looks portal actions up among their own names only', async () => {
    for (const action of ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf']) {
      const res = await h.app.inject({ method: 'POST', url: `${portalPath}/${action}` });
      expect(res.statusCode, action).toBe(404);
      expect(res.json().error).toMatchObject({ code: 'NOT_FOUND', message: 'Action not found' });
    }
    const approve = await h.app.inject({ method: 'POST', url: `${portalPath}/approve` });
    expect(approve.statusCode, approve.body).toBe(200);
  });
});
