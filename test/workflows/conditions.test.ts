import { describe, expect, it } from 'vitest';
import {
  type Condition,
  holds,
  matches,
  parsePath,
  renderTemplate,
  valueAt,
} from '../../src/modules/workflows/workflows.conditions.js';
import { pathProblem } from '../../src/modules/workflows/workflows.shapes.js';

const data = {
  invoiceId: 'inv_1',
  amountDue: 1250.5,
  invoice: {
    total: 1250.5,
    status: 'draft',
    tags: ['vip', 'north'],
    notes: 'Gate code 1234',
    customer: null,
    lineItems: [{ description: 'Mowing', amount: 100 }],
    count: '42',
  },
};

const c = (field: string, op: Condition['op'], value: Condition['value']): Condition => ({ field, op, value });

describe('condition evaluator', () => {
  it('compares numbers as numbers', () => {
    expect(holds(c('invoice.total', 'gt', 1000), data)).toBe(true);
    expect(holds(c('invoice.total', 'gt', 1250.5), data)).toBe(false);
    expect(holds(c('invoice.total', 'gte', 1250.5), data)).toBe(true);
    expect(holds(c('invoice.total', 'lt', 99), data)).toBe(false);
    expect(holds(c('invoice.total', 'lte', 1250.5), data)).toBe(true);
    // 9 < 10 as numbers, although "9" > "10" as text
    expect(holds(c('invoice.count', 'gt', 9), data)).toBe(true);
    expect(holds(c('invoice.count', 'eq', 42), data)).toBe(true);
    expect(holds(c('invoice.total', 'eq', '1250.50'), data)).toBe(true);
  });

  it('eq / ne on strings, booleans and null', () => {
    expect(holds(c('invoice.status', 'eq', 'draft'), data)).toBe(true);
    expect(holds(c('invoice.status', 'eq', 'DRAFT'), data)).toBe(false);
    expect(holds(c('invoice.status', 'ne', 'sent'), data)).toBe(true);
    expect(holds(c('invoice.customer', 'eq', null), data)).toBe(true);
  });

  it('contains: substring of a string or element of an array', () => {
    expect(holds(c('invoice.notes', 'contains', 'code'), data)).toBe(true);
    expect(holds(c('invoice.notes', 'contains', 'alarm'), data)).toBe(false);
    expect(holds(c('invoice.tags', 'contains', 'vip'), data)).toBe(true);
    expect(holds(c('invoice.tags', 'contains', 'vi'), data)).toBe(false);
    expect(holds(c('invoice.total', 'contains', '12'), data)).toBe(false);
  });

  it('in: the value is one of an array', () => {
    expect(holds(c('invoice.status', 'in', ['draft', 'sent']), data)).toBe(true);
    expect(holds(c('invoice.status', 'in', ['paid']), data)).toBe(false);
    expect(holds(c('amountDue', 'in', [1250.5]), data)).toBe(true);
    expect(holds(c('invoice.status', 'in', 'draft'), data)).toBe(false);
  });

  it('a missing path makes any condition false, ne included', () => {
    expect(holds(c('invoice.missing', 'ne', 'x'), data)).toBe(false);
    expect(holds(c('invoice.status.deeper', 'eq', 'x'), data)).toBe(false);
    expect(holds(c('invoice.lineItems.3.amount', 'eq', 1), data)).toBe(false);
    expect(holds(c('invoice.lineItems.0.amount', 'eq', 100), data)).toBe(true);
  });

  it('ordering of mixed types does not hold', () => {
    expect(holds(c('invoice.status', 'gt', 5), data)).toBe(false);
    expect(holds(c('invoice.tags', 'gt', 5), data)).toBe(false);
  });

  it('never reaches the prototype chain', () => {
    expect(holds(c('invoice.constructor', 'ne', 'x'), data)).toBe(false);
    expect(holds(c('__proto__', 'ne', 'x'), data)).toBe(false);
    expect(holds(c('invoice.toString', 'ne', 'x'), data)).toBe(false);
  });

  it('all conditions hold (AND); none = always', () => {
    expect(matches([], data)).toBe(true);
    expect(matches([c('amountDue', 'gt', 1000), c('invoice.status', 'eq', 'draft')], data)).toBe(true);
    expect(matches([c('amountDue', 'gt', 1000), c('invoice.status', 'eq', 'sent')], data)).toBe(false);
  });
});

describe('paths', () => {
  it('parses dotted paths and rejects bad syntax', () => {
    expect(parsePath('invoice.lineItems.0.amount')).toEqual(['invoice', 'lineItems', '0', 'amount']);
    for (const bad of ['', '.a', 'a.', 'a..b', '0.a', 'a b', 'a[0]', '__proto__.x', 'a.constructor', 'a.01']) {
      expect(parsePath(bad), bad).toBeUndefined();
    }
  });

  it('knows what the trigger data can carry', () => {
    expect(pathProblem('invoice.created', 'invoice.total')).toBeUndefined();
    expect(pathProblem('invoice.created', 'amountDue')).toBeUndefined();
    expect(pathProblem('invoice.created', 'invoice.lineItems.0.description')).toBeUndefined();
    expect(pathProblem('invoice.status_changed', 'newStatus')).toBeUndefined();
    expect(pathProblem('customer.updated', 'customer.tags')).toBeUndefined();
    // rooted outside the event data
    expect(pathProblem('invoice.created', 'customer.email')).toMatch(/no field "customer"/);
    expect(pathProblem('invoice.created', 'oldStatus')).toMatch(/no field/);
    // a property the resource does not have, a segment below a scalar, a name under an array
    expect(pathProblem('invoice.created', 'invoice.nope')).toMatch(/does not exist/);
    expect(pathProblem('invoice.created', 'amountDue.cents')).toMatch(/does not exist/);
    expect(pathProblem('invoice.created', 'invoice.lineItems.first')).toMatch(/does not exist/);
    expect(pathProblem('invoice.created', 'invoice..total')).toMatch(/dotted path/);
  });
});

describe('placeholders', () => {
  it('renders values, JSON for objects, empty for unresolved', () => {
    expect(renderTemplate('Invoice {{invoiceId}} for {{ amountDue }}', data)).toBe('Invoice inv_1 for 1250.5');
    expect(renderTemplate('[{{invoice.nothing}}][{{invoice.customer}}]', data)).toBe('[][]');
    expect(renderTemplate('{{invoice.tags}}', data)).toBe('["vip","north"]');
    expect(renderTemplate('{{__proto__}}{{a..b}}', data)).toBe('');
    expect(valueAt(data, 'invoice.lineItems.0.description')).toBe('Mowing');
  });
});
