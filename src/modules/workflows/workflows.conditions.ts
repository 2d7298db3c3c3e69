/*
 * The pure half of workflows (operations.md §7): dotted paths into an event's `data`,
 * condition evaluation and `{{dotted.path}}` placeholders. No database, no I/O, so
 * the rules are unit-tested on their own (test/workflows/conditions.test.ts).
 */

export const OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'contains', 'in'] as const;
export type Operator = (typeof OPERATORS)[number];

export type Scalar = string | number | boolean | null;
export type ConditionValue = Scalar | Scalar[];

export interface Condition {
  field: string;
  op: Operator;
  value: ConditionValue;
}

/** A path segment: an identifier (`invoice`, `amountDue`) or an array index (`0`). */
const SEGMENT = /^(?:[A-Za-z_$][A-Za-z0-9_$]*|0|[1-9][0-9]{0,5})$/;
/** Names that reach the prototype chain rather than the data: never valid. */
const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);
export const MAX_PATH_LENGTH = 200;

/** Splits a dotted path, or returns undefined when it is not syntactically valid. */
export function parsePath(path: string): string[] | undefined {
  if (path.length === 0 || path.length > MAX_PATH_LENGTH) return undefined;
  const parts = path.split('.');
  for (const p of parts) if (!SEGMENT.test(p) || FORBIDDEN.has(p)) return undefined;
  if (/^[0-9]/.test(parts[0] as string)) return undefined;
  return parts;
}

const MISSING: unique symbol = Symbol('missing');
type Resolved = unknown | typeof MISSING;

/** The value at `path` in `data` (own properties only), or MISSING. */
function resolve(data: unknown, parts: readonly string[]): Resolved {
  let cur: unknown = data;
  for (const p of parts) {
    if (Array.isArray(cur)) {
      if (!/^[0-9]+$/.test(p)) return MISSING;
      const i = Number(p);
      if (i >= cur.length) return MISSING;
      cur = cur[i];
    } else if (cur !== null && typeof cur === 'object') {
      if (!Object.hasOwn(cur, p)) return MISSING;
      cur = (cur as Record<string, unknown>)[p];
    } else {
      return MISSING;
    }
  }
  return cur === undefined ? MISSING : cur;
}

/** The value at a dotted path, `undefined` when the path is invalid or absent. */
export function valueAt(data: unknown, path: string): unknown {
  const parts = parsePath(path);
  if (!parts) return undefined;
  const v = resolve(data, parts);
  return v === MISSING ? undefined : v;
}

/** A finite number from a number or a numeric string ("1000.50"), else undefined. */
function numeric(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' && /^-?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)$/.test(v.trim())) return Number(v);
  return undefined;
}

/** Equality: numbers (and numeric strings) as numbers, everything else strictly. */
function equal(a: unknown, b: unknown): boolean {
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined && nb !== undefined && (typeof a === 'number' || typeof b === 'number')) return na === nb;
  return a === b;
}

/**
 * Ordering: numbers as numbers when both sides are numeric; two strings by code
 * unit (ISO dates order correctly); anything else does not compare (false).
 */
function compare(a: unknown, b: unknown): number | undefined {
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined && nb !== undefined && (typeof a === 'number' || typeof b === 'number')) return na - nb;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return undefined;
}

/** One condition against the event data. A missing path makes any condition false (ne too). */
export function holds(condition: Condition, data: unknown): boolean {
  const parts = parsePath(condition.field);
  if (!parts) return false;
  const actual = resolve(data, parts);
  if (actual === MISSING) return false;
  const { op, value } = condition;
  switch (op) {
    case 'eq':
      return equal(actual, value);
    case 'ne':
      return !equal(actual, value);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const c = compare(actual, value);
      if (c === undefined) return false;
      return op === 'gt' ? c > 0 : op === 'gte' ? c >= 0 : op === 'lt' ? c < 0 : c <= 0;
    }
    case 'contains':
      if (typeof actual === 'string') return typeof value === 'string' && actual.includes(value);
      if (Array.isArray(actual)) return actual.some((el) => equal(el, value));
      return false;
    case 'in':
      return Array.isArray(value) && value.some((el) => equal(actual, el));
    default:
      return false;
  }
}

/** All conditions hold (AND); an empty list always holds. */
export function matches(conditions: readonly Condition[], data: unknown): boolean {
  return conditions.every((c) => holds(c, data));
}

const PLACEHOLDER = /\{\{\s*([^{}\s]{1,200})\s*\}\}/g;

/**
 * Replaces `{{dotted.path}}` with the value at that path in `data`: strings as they
 * are, numbers and booleans as text, objects and arrays as JSON; an unresolved or
 * invalid path, or null, renders empty.
 */
export function renderTemplate(template: string, data: unknown): string {
  return template.replace(PLACEHOLDER, (_m, path: string) => {
    const v = valueAt(data, path);
    if (v === undefined || v === null) return '';
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    return JSON.stringify(v);
  });
}
