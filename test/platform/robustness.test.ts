import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASS_THROUGH_BODIES } from '../../src/modules/auth/auth.schemas.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/**
 * "Bad input gets a clear 4xx, never a 500, and no internals", driven by /openapi.json: every
 * documented operation (routes added later are covered automatically) is called by a signed-in
 * Business-plan owner with garbage and real path ids, hostile query values and bodies of every
 * wrong shape, plus the undocumented Better Auth routes. A deterministic sample keeps it bounded.
 */

type Schema = Record<string, unknown>;
interface Operation {
  method: string;
  path: string;
  query: Array<{ name: string; schema: Schema }>;
  body: Schema | undefined;
  documented: boolean;
}
interface Case {
  method: string;
  url: string;
  payload?: string;
  contentType?: string;
  withCookie: boolean;
}

/** mulberry32: a small seeded generator, so every run sends the same sample. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NUL = '\u0000';
const HUGE = 'a'.repeat(100_000);
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty'];
const GARBAGE_IDS = [
  'nope',
  NUL,
  `cus_${NUL}x`,
  ...PROTO_KEYS,
  'a'.repeat(300),
  '1e309',
  '-1',
  '9223372036854775808',
  "x'; DROP TABLE customers; --",
  '%',
];
const QUERY_VALUES = [
  NUL,
  `a${NUL}b`,
  'x'.repeat(5000),
  '1e309',
  '-1e309',
  '-1',
  '9223372036854775808',
  'NaN',
  ...PROTO_KEYS,
  '',
];
const EXTRA_QUERIES = [
  '__proto__=1',
  'constructor=1',
  'page=1e309',
  'page=10000001',
  'page=1&page=2',
  'limit=1e309',
  `x=${encodeURIComponent(NUL)}`,
];
/** Raw JSON texts: `@@` is replaced by the value, so 1e309 (Infinity once parsed) can be sent. */
const FIELD_VALUES = [
  '123',
  '"x"',
  'true',
  'null',
  '[]',
  '{}',
  JSON.stringify(NUL),
  JSON.stringify(`x${NUL}`),
  JSON.stringify(HUGE),
  '1e308',
  '1e309',
  '-1e309',
  '-1',
  '9223372036854775808',
  '0.000001',
  '"__proto__"',
  '{"__proto__":{"polluted":1}}',
  '[[[[[[[[[[1]]]]]]]]]]',
];
const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
const deepObject = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
const WHOLE_BODIES = [
  'null',
  '[]',
  '"text"',
  '42',
  '{',
  JSON.stringify(NUL),
  deep(65),
  deep(10_000),
  deepObject(10_000),
  '{"a":'.repeat(10_000),
  '{"__proto__":{"admin":true},"constructor":{"prototype":{"admin":true}}}',
];
const CONTENT_TYPES: Array<[string | undefined, string]> = [
  ['text/plain', '{}'],
  ['application/x-www-form-urlencoded', 'a=b&__proto__=1'],
  ['multipart/form-data; boundary=x', '--x--'],
  ['application/json; charset=utf-16', '{}'],
  ['application/json', '\u00ff\u00fe{'],
  [undefined, '{}'],
];
/**
 * Better Auth routes behind the /api/auth/* pass-through, which are not in the document: those
 * whose bodies the service validates (with their schemas, so each field is mutated), and a few
 * without a body or off.
 */
const AUTH_EXTRA: Array<[string, Schema | undefined]> = [
  ...Object.entries(PASS_THROUGH_BODIES).map(([name, body]): [string, Schema] => [name, body as unknown as Schema]),
  ['forget-password', undefined],
  ['sign-up/email', undefined],
  ['revoke-sessions', undefined],
  ['revoke-other-sessions', undefined],
  ['sign-in/social', undefined],
  ['unlink-account', undefined],
];

const SESSION_ENDING = new Set(['/api/auth/sign-out', '/api/auth/revoke-sessions', '/api/auth/delete-user']);

const INTERNALS =
  /\bat [\w.<>]+ \(|node_modules|\.ts:\d+|\bSELECT\s|\bINSERT\s+INTO|\bUPDATE\s+"?\w+"?\s+SET|\bDELETE\s+FROM|violates|syntax error at|invalid input syntax|invalid byte sequence|relation "|column "|duplicate key|out of range for type|ECONNREFUSED|TypeError|ReferenceError|RangeError|Cannot read propert|Maximum call stack|is not a function/i;

function resolve(doc: Schema, schema: unknown): Schema {
  let s = (schema ?? {}) as Schema;
  for (let i = 0; i < 10 && typeof s.$ref === 'string'; i++) {
    const name = s.$ref.split('/').pop() as string;
    s = ((doc.components as Schema)?.schemas as Record<string, Schema>)?.[name] ?? {};
  }
  return s;
}

/** A plausible value for a schema, so that one mutated field reaches the code behind validation. */
function sample(doc: Schema, schema: unknown, name: string, ids: Map<string, string>): unknown {
  const s = resolve(doc, schema);
  const branches = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (branches) {
    const first = branches.map((b) => resolve(doc, b)).find((b) => b.type !== 'null');
    return sample(doc, first, name, ids);
  }
  if (Array.isArray(s.enum)) return s.enum[0];
  if (s.const !== undefined) return s.const;
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  if (type === 'object' || s.properties) {
    const out: Record<string, unknown> = {};
    const props = (s.properties ?? {}) as Record<string, unknown>;
    for (const key of (s.required as string[] | undefined) ?? []) out[key] = sample(doc, props[key], key, ids);
    return out;
  }
  if (type === 'array') {
    const min = Number(s.minItems ?? 0);
    return min > 0 || name === 'lineItems' ? [sample(doc, s.items, name, ids)] : [];
  }
  if (type === 'integer' || type === 'number') {
    const min = typeof s.minimum === 'number' ? s.minimum : 0;
    return Math.max(min, 1);
  }
  if (type === 'boolean') return true;
  if (type === 'string') {
    if (s.format === 'date') return '2026-06-01';
    if (s.format === 'date-time') return '2026-06-01T10:00:00Z';
    if (s.format === 'email') return 'fuzz@example.com';
    if (s.format === 'uri' || s.format === 'url' || name === 'url') return 'http://127.0.0.1:9/hook';
    if (/Id$/.test(name)) return ids.get(name.replace(/Id$/, '')) ?? 'nope';
    return 'x'.repeat(Math.max(1, Number(s.minLength ?? 1)));
  }
  return null;
}

function operations(doc: Schema): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const params = ((op.parameters as Schema[] | undefined) ?? []).filter((p) => p.in === 'query');
      const content = (op.requestBody as Schema | undefined)?.content as Record<string, Schema> | undefined;
      out.push({
        method: method.toUpperCase(),
        path,
        query: params.map((p) => ({ name: p.name as string, schema: resolve(doc, p.schema) })),
        body: content?.['application/json']?.schema as Schema | undefined,
        documented: true,
      });
    }
  }
  for (const [name, body] of AUTH_EXTRA) {
    out.push({ method: 'POST', path: `/api/auth/${name}`, query: [], body, documented: false });
  }
  return out;
}

describe('no operation answers 5xx or leaks internals to hostile input', () => {
  let h: Harness;
  let owner: TestUser;
  /** Real ids of the owner's organization, by resource (first path segment, singular). */
  const ids = new Map<string, string>();

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h); // Business plan: every gated route is reachable
    const create = async (url: string, body: unknown) => {
      const res = await owner.call('POST', url, body);
      if (res.statusCode !== 201) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
      return res.json().data as Record<string, unknown>;
    };
    const customer = await create('/api/customers', { firstName: 'Robust', email: 'r@example.com' });
    ids.set('customer', customer.id as string);
    ids.set(
      'property',
      (await create('/api/properties', { customerId: customer.id, street: '1 Main St' })).id as string,
    );
    const service = await create('/api/services', { name: 'Mow', unitPrice: 40 });
    ids.set('service', service.id as string);
    const lineItems = [{ description: 'Mow', quantity: 1, unitPrice: 40 }];
    ids.set('invoice', (await create('/api/invoices', { customerId: customer.id, lineItems })).id as string);
    const estimate = await create('/api/estimates', { customerId: customer.id, lineItems });
    ids.set('estimate', estimate.id as string);
    const job = await create('/api/jobs', { customerId: customer.id, scheduledDate: '2026-06-01' });
    ids.set('job', job.id as string);
    const webhook = await create('/api/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['customer.created'] });
    ids.set('webhook', webhook.id as string);
    const members = await owner.call('GET', '/api/members');
    ids.set('member', members.json().data[0].id);
    ids.set('organization', owner.organizationId);
    // A live portal token (the link in a sent estimate), so the action lookup itself is exercised.
    const sent = await owner.call('POST', `/api/estimates/${estimate.id}/send`);
    ids.set('portal', new URL(sent.json().data.portalUrl).pathname.split('/').pop() as string);
  });
  afterAll(async () => h?.close());

  function cases(doc: Schema, op: Operation): Case[] {
    const segment = op.path.split('/')[2] ?? '';
    const resource = segment.replace(/-/g, '').replace(/ies$/, 'y').replace(/s$/, '');
    const realId = ids.get(resource === 'webhookdelivery' ? 'webhook' : resource) ?? ids.get('customer');
    const fill = (id: string, action = 'approve') =>
      op.path.replace('{action}', encodeURIComponent(action)).replace(/\{[A-Za-z_]+\}/g, () => encodeURIComponent(id));
    const hasParams = op.path.includes('{');
    const realUrl = fill(realId as string);
    // Routes that end the owner's session would blind every later case: they are called anonymously.
    const withCookie = !SESSION_ENDING.has(op.path);
    const out: Case[] = [];
    const add = (c: Omit<Case, 'withCookie'>) => out.push({ ...c, withCookie });
    const json = (payload: string) =>
      add({ method: op.method, url: realUrl, payload, contentType: 'application/json' });

    if (hasParams) {
      for (const id of GARBAGE_IDS)
        add({
          method: op.method,
          url: fill(id),
          ...(op.body ? { payload: '{}', contentType: 'application/json' } : {}),
        });
      if (op.path.includes('{action}'))
        for (const key of [...PROTO_KEYS, `approve${NUL}`])
          add({ method: op.method, url: fill(realId as string, key) });
    }
    for (const q of op.query) {
      for (const v of QUERY_VALUES) add({ method: op.method, url: `${realUrl}?${q.name}=${encodeURIComponent(v)}` });
    }
    if (op.method === 'GET' || op.method === 'DELETE') {
      for (const q of EXTRA_QUERIES) add({ method: op.method, url: `${realUrl}?${q}` });
    }
    if (op.method !== 'GET') {
      for (const body of WHOLE_BODIES) json(body);
      for (const [type, body] of CONTENT_TYPES)
        add({ method: op.method, url: realUrl, payload: body, ...(type ? { contentType: type } : {}) });
      const schema = op.body
        ? resolve(doc, op.body)
        : {
            type: 'object',
            properties: { email: {}, password: {}, newPassword: {}, currentPassword: {}, token: {}, name: {} },
          };
      const base = (op.body ? sample(doc, schema, '', ids) : {}) as Record<string, unknown>;
      const props = Object.keys((schema.properties ?? {}) as object);
      for (const prop of [...props, ...PROTO_KEYS.slice(0, 2)]) {
        for (const value of FIELD_VALUES) {
          const text = JSON.stringify({ ...base, [prop]: '@@' }).replace('"@@"', value);
          json(text);
        }
      }
      // Every field null at once (update-user once wrote a null name: 500).
      if (props.length > 0) json(JSON.stringify(Object.fromEntries(props.map((p) => [p, null]))));
    }
    return out;
  }

  it('answers every sampled case below 500, in the error shape, without internals', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json() as Schema;
    const ops = operations(doc);
    expect(ops.filter((o) => o.documented).length).toBeGreaterThan(80);
    // Deletes last, so records behind real ids exist for every other operation.
    ops.sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
    const random = rng(18);
    const failures: string[] = [];
    let sent = 0;
    for (const op of ops) {
      const all = cases(doc, op);
      // Every path-id and whole-body case, plus a seeded sample of the per-field and per-query ones;
      // every case of the undocumented auth routes (few, and validated by a table of their own).
      const chosen = all.filter((_c, i) => !op.documented || i < GARBAGE_IDS.length + 8 || random() < 0.15);
      for (let i = 0; i < chosen.length; i += 8) {
        const batch = chosen.slice(i, i + 8);
        const responses = await Promise.all(
          batch.map((c) =>
            h.app.inject({
              method: c.method as 'GET',
              url: c.url,
              headers: {
                ...(c.withCookie ? { cookie: owner.cookie } : {}),
                ...(c.contentType ? { 'content-type': c.contentType } : {}),
              },
              ...(c.payload === undefined ? {} : { payload: c.payload }),
            }),
          ),
        );
        responses.forEach((res: LightMyRequestResponse, j) => {
          const c = batch[j] as Case;
          sent++;
          const label = `${c.method} ${c.url.slice(0, 120)} ${c.contentType ?? ''} ${(c.payload ?? '').slice(0, 80)}`;
          if (res.statusCode >= 500) failures.push(`${label} → ${res.statusCode} ${res.body.slice(0, 200)}`);
          // A PDF route with a real document id answers the document itself.
          else if (res.statusCode < 300 && res.headers['content-type'] === 'application/pdf') return;
          else if (INTERNALS.test(res.body)) failures.push(`${label} → leaks: ${res.body.slice(0, 200)}`);
          else if (op.documented && res.statusCode !== 204) {
            const shape = res.statusCode < 300 ? 'data' : 'error';
            if (!(shape in (res.json() as object))) failures.push(`${label} → ${res.statusCode} without ${shape}`);
          }
        });
      }
    }
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(1500);
    // Still signed in at the end: the sweep really ran as the owner throughout.
    expect((await owner.call('GET', '/api/customers')).statusCode).toBe(200);
  }, 300_000);
});
