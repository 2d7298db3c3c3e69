import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { Customer, CustomerList } from '../../src/modules/customers/customers.schemas.js';
import { DateTime, Nullable } from '../../src/platform/schemas.js';
import { lazySerializerFactory, nullableAsTypeList } from '../../src/platform/validation.js';

/**
 * The response serializers compile `Nullable(T)` of a plain type as a type list instead of an
 * `anyOf` (platform/validation.ts, for speed): they must still answer exactly what the schema
 * allows and refuse what it does not, and leave the documented schema alone.
 */
const serializerOf = (schema: unknown) =>
  (lazySerializerFactory() as unknown as (ext: unknown, opts: unknown) => (route: unknown) => (v: unknown) => string)(
    {},
    {},
  )({ schema, method: 'GET', url: '/x', httpStatus: '200' });

const Shape = Type.Object(
  {
    text: Nullable(Type.String({ description: 'a nullable string' })),
    count: Nullable(Type.Integer()),
    flag: Nullable(Type.Boolean()),
    at: Nullable(DateTime()),
    kind: Nullable(Type.Enum(['a', 'b'])),
  },
  { additionalProperties: false },
);

describe('response serializers', () => {
  const serialize = serializerOf(Shape);

  it('write nullable values as the schema says', () => {
    const at = new Date('2026-04-02T14:05:09.000Z');
    expect(JSON.parse(serialize({ text: 'x"y', count: 3, flag: false, at, kind: 'b' }))).toEqual({
      text: 'x"y',
      count: 3,
      flag: false,
      at: '2026-04-02T14:05:09.000Z',
      kind: 'b',
    });
    expect(JSON.parse(serialize({ text: null, count: null, flag: null, at: null, kind: null }))).toEqual({
      text: null,
      count: null,
      flag: null,
      at: null,
      kind: null,
    });
  });

  it('refuse a value of another type, as the anyOf did', () => {
    const valid = { text: 'x', count: 1, flag: true, at: null, kind: null };
    expect(() => serialize({ ...valid, text: 5 })).toThrow(/text/);
    expect(() => serialize({ ...valid, count: 1.5 })).toThrow(/count/);
    expect(() => serialize({ ...valid, count: '1' })).toThrow(/count/);
    expect(() => serialize({ ...valid, flag: 'yes' })).toThrow(/flag/);
    // Branches with more than a type keep their anyOf, which checks the rest.
    expect(() => serialize({ ...valid, at: 'not a date' })).toThrow(/at/);
    expect(() => serialize({ ...valid, kind: 'c' })).toThrow(/kind/);
  });

  it('rewrites only plain nullable types, on a copy', () => {
    const before = JSON.stringify(Customer);
    const copy = nullableAsTypeList(Customer) as { properties: Record<string, Record<string, unknown>> };
    expect(JSON.stringify(Customer)).toBe(before);
    expect(copy.properties.lastName).toEqual({ type: ['string', 'null'] });
    expect(copy.properties.smsConsent?.properties).toMatchObject({
      updatedAt: { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] },
    });
    const text = (nullableAsTypeList(Shape) as { properties: Record<string, unknown> }).properties.text;
    expect(text).toEqual({ type: ['string', 'null'] });
  });

  it('serializes a customers page as before', () => {
    const row = {
      id: 'cus_1',
      name: 'Dana Whitfield',
      firstName: 'Dana',
      lastName: 'Whitfield',
      company: null,
      customerType: 'INDIVIDUAL',
      email: 'dana@example.com',
      additionalEmails: [],
      phone: '5550142',
      secondaryPhone: null,
      address: '18 Maple Court',
      billingAddress: '18 Maple Court',
      billingCity: null,
      billingState: null,
      billingZip: null,
      notes: null,
      tags: ['weekly'],
      taxExempt: false,
      status: 'active',
      phoneE164: null,
      smsConsent: { status: 'unknown', updatedAt: null, source: null },
      createdAt: new Date('2026-04-02T14:05:09.000Z'),
      updatedAt: new Date('2026-04-02T14:05:09.000Z'),
    };
    expect(serializerOf(CustomerList)({ data: [row] })).toBe(JSON.stringify({ data: [row] }));
  });
});
