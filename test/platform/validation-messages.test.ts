import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validatorCompiler } from '../../src/platform/validation.js';
import { validationDetails } from '../../src/platform/validation-messages.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

type Schema = Record<string, unknown>;

/**
 * Values that break `schema` in every way it can be broken: a wrong type, each bound
 * crossed, each pattern, format, enum and constant missed, a required field left out, an
 * unknown field added, each union branch broken (a tagged union's tag missing or unknown).
 */
function badValues(schema: Schema, depth = 0): unknown[] {
  if (depth > 6) return [];
  const out: unknown[] = [];
  const variants = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (Array.isArray(variants)) {
    for (const v of variants) out.push(...badValues(v, depth + 1));
    out.push({ zzUnknown: 1 });
    return out;
  }
  if (schema.const !== undefined) out.push('zz-not-the-constant');
  if (Array.isArray(schema.enum)) out.push('zz-not-in-the-list');
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('object') || schema.properties) {
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    out.push('not an object', {});
    const names = Object.keys(props);
    if (names[0]) out.push({ [`${names[0]}x`]: 1 });
    const perProp = Object.fromEntries(names.map((n) => [n, badValues(props[n] as Schema, depth + 1)]));
    const most = Math.max(0, ...Object.values(perProp).map((v) => v.length));
    for (let i = 0; i < most; i++) {
      const value: Record<string, unknown> = {};
      for (const n of names) {
        const bad = perProp[n] as unknown[];
        if (bad.length > 0) value[n] = bad[i % bad.length];
      }
      out.push(value);
    }
  }
  if (types.includes('array')) {
    out.push('not a list');
    const items = (schema.items ?? {}) as Schema;
    for (const b of badValues(items, depth + 1).slice(0, 12)) out.push([b]);
    if (typeof schema.minItems === 'number' && schema.minItems > 0) out.push([]);
    if (typeof schema.maxItems === 'number' && schema.maxItems < 300) {
      out.push(Array.from({ length: schema.maxItems + 1 }, () => 'x'));
    }
    if (schema.uniqueItems) out.push(['same', 'same']);
  }
  if (types.includes('string')) {
    out.push(12345);
    if (typeof schema.minLength === 'number' && schema.minLength > 0) out.push('');
    if (typeof schema.maxLength === 'number' && schema.maxLength < 200_000) out.push('x'.repeat(schema.maxLength + 1));
    if (schema.pattern) out.push(' ', '!!');
    if (schema.format) out.push('zz-not-formatted');
  }
  if (types.includes('number') || types.includes('integer')) {
    out.push('abc', true);
    if (types.includes('integer')) out.push(1.5);
    if (typeof schema.minimum === 'number') out.push(schema.minimum - 1);
    if (typeof schema.maximum === 'number') out.push(schema.maximum + 1);
    if (typeof schema.exclusiveMinimum === 'number') out.push(schema.exclusiveMinimum);
    if (typeof schema.exclusiveMaximum === 'number') out.push(schema.exclusiveMaximum);
  }
  if (types.includes('boolean')) out.push('maybe');
  return out;
}

const MACHINERY = /pattern|constant|anyOf|oneOf|schema|must match|should|equal to|\bNOT\b/;

/*
 * Issue 48 item 3: every validation message is written for people, from one place. This
 * walks the error paths of every route's request schemas (body, query, path) through the
 * service's own validator and message writer, and fails on Ajv's words.
 */
describe('validation messages', () => {
  let h: Harness;
  let owner: TestUser;
  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
  });
  afterAll(async () => h?.close());

  it('walks every route’s request schemas: each message names the field and says what is expected, in words', () => {
    let checked = 0;
    const fallbacks: string[] = [];
    for (const route of h.app.registeredRoutes) {
      for (const part of ['body', 'querystring', 'params'] as const) {
        const schema = route.inputs?.[part] as Schema | undefined;
        if (!schema) continue;
        const validate = validatorCompiler({ schema, httpPart: part, method: route.method, url: route.url }) as ((
          v: unknown,
        ) => boolean) & { errors?: unknown[] | null };
        for (const value of badValues(schema)) {
          const input = structuredClone(value);
          if (validate(input) || !validate.errors) continue;
          const details = validationDetails(validate.errors as never, part);
          expect(details.length, `${route.method} ${route.url} ${part} ${JSON.stringify(input)}`).toBeGreaterThan(0);
          for (const d of details) {
            const where = `${route.method} ${route.url} ${part}: ${d.field} ${d.message}`;
            expect(d.field, where).toMatch(/\S/);
            expect(d.message, where).not.toMatch(MACHINERY);
            if (d.message === 'has an invalid value') fallbacks.push(where);
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(2000);
    expect(fallbacks).toEqual([]);
  });

  it('answers the first-week examples of issue 48 in words', async () => {
    const limit = await owner.call('GET', '/api/jobs?limit=1.5');
    expect(limit.json().error.message).toBe('limit must be a whole number');
    const time = await owner.call('POST', '/api/jobs/schedules', {
      customerId: 'cus_x',
      title: 'Mowing',
      rrule: 'FREQ=WEEKLY',
      startDate: '2026-05-01',
      startTime: '9:00',
      billing: { mode: 'monthly' },
    });
    expect(time.statusCode).toBe(400);
    expect(time.json().error.details).toEqual([
      { field: 'startTime', message: 'must be a time in 24-hour HH:mm, e.g. 09:00' },
      { field: 'billing.mode', message: 'must be one of: per_visit, batch, installments, none' },
    ]);
    const installments = await owner.call('POST', '/api/jobs/schedules', {
      customerId: 'cus_x',
      title: 'Mowing',
      rrule: 'FREQ=WEEKLY',
      startDate: '2026-05-01',
      billing: { mode: 'installments', count: 0 },
    });
    expect(installments.json().error.details).toEqual([
      { field: 'billing.firstDate', message: 'is required' },
      { field: 'billing.every', message: 'is required' },
      { field: 'billing.count', message: 'must be at least 1' },
    ]);
    const long = await owner.call('POST', '/api/invoices/x/payments', {
      amount: 1,
      method: 'check',
      reference: 'r'.repeat(240),
    });
    expect(long.json().error.details).toEqual([
      { field: 'reference', message: 'must be at most 200 characters (this one has 240)' },
    ]);
    const date = await owner.call('POST', '/api/invoices/x/payments', {
      amount: 1,
      method: 'check',
      paymentDate: '5/3/2026',
    });
    expect(date.json().error.details).toEqual([
      { field: 'paymentDate', message: 'must be a date as YYYY-MM-DD, e.g. 2026-05-01' },
    ]);
    const typo = await owner.call('GET', '/api/invoices?stauts=overdue');
    expect(typo.json().error.details).toEqual([
      { field: 'stauts', message: 'is not an accepted field (did you mean status?)' },
    ]);
  });
});
