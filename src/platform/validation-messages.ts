import type { FieldIssue } from './errors.js';

/*
 * Every validation message of the service, written in one place for people: each names the
 * field (in `field`), says what was wrong and the form expected, with an example where one
 * helps ("must be a time in 24-hour HH:mm, e.g. 09:00"). Ajv's own words ("must match
 * pattern …", "must be equal to constant", "must NOT have more than …") never reach a client;
 * test/platform/validation-messages.test.ts walks every route's schemas to keep it so.
 */

/** One Ajv error, as reported with `verbose: true` (the failing schema and value included). */
export interface AjvIssue {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
  /** The keyword's value (verbose). */
  schema?: unknown;
  /** The schema object that holds the keyword (verbose). */
  parentSchema?: Record<string, unknown>;
  /** The value that failed (verbose). */
  data?: unknown;
}

/** The patterns the schemas use, in words. A pattern not listed falls back to its schema's example. */
const PATTERNS: Record<string, string> = {
  '\\S': 'must not be blank',
  '^([01]\\d|2[0-3]):[0-5]\\d$': 'must be a time in 24-hour HH:mm, e.g. 09:00',
  '^[A-Za-z0-9_-]+$': 'must be an id (letters, digits, _ and -), e.g. cus_01JD8Q5M2XH7Z4W9K3T6R1B0NA',
  '^[a-z0-9][a-z0-9_.-]*$':
    'must be lower-case letters, digits, ".", "_" or "-", starting with a letter or digit, e.g. invoice-reminder',
  '^[A-Z]{3}$': 'must be a three-letter ISO 4217 currency code in capitals, e.g. USD',
  '^pk_(test|live)_[A-Za-z0-9_]{8,250}$': 'must be a Stripe publishable key, e.g. pk_test_51H…',
  '^whsec_[A-Za-z0-9+/=_-]{8,200}$': 'must be a Stripe webhook signing secret, e.g. whsec_…',
  '^(sk|rk)_(test|live)_[A-Za-z0-9_]{8,250}$': 'must be a Stripe secret or restricted key, e.g. sk_test_51H…',
  '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2}))?$':
    'must be a date as YYYY-MM-DD (e.g. 2026-05-01), or an ISO 8601 date-time with an offset (e.g. 2026-05-01T09:00:00Z)',
};

/** The message of an `EnumList` filter (platform/enum.ts), read back from its pattern `^(a|b)(,(a|b))*$`. */
function listPatternMessage(pattern: string): string | undefined {
  const m = /^\^\(([a-z_|]+)\)\(,\(\1\)\)\*\$$/.exec(pattern);
  if (!m) return undefined;
  const values = (m[1] as string).split('|');
  return `must be one or more of: ${values.join(', ')}, comma-separated, e.g. ${values.slice(0, 2).join(',')}`;
}

const FORMATS: Record<string, string> = {
  date: 'must be a date as YYYY-MM-DD, e.g. 2026-05-01',
  'date-time': 'must be an ISO 8601 date-time with an offset, e.g. 2026-05-01T09:00:00Z',
  time: 'must be a time as HH:mm:ss, e.g. 09:00:00',
  email: 'must be an email address, e.g. dana@example.com',
  uri: 'must be a full URL, e.g. https://example.com/hooks',
  url: 'must be a full URL, e.g. https://example.com/hooks',
  uuid: 'must be a UUID, e.g. 3f2a8c1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c',
  ipv4: 'must be an IPv4 address, e.g. 203.0.113.7',
  ipv6: 'must be an IPv6 address, e.g. 2001:db8::1',
};

const TYPES: Record<string, string> = {
  integer: 'a whole number',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  array: 'a list (a JSON array)',
  object: 'an object',
  null: 'null',
};

/** "must be a whole number" for `integer`; the phrase after "must be". */
export const typeWords = (type: string) => TYPES[type] ?? type;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The schema's first example, as a client would type it, or undefined. */
function exampleOf(schema: Record<string, unknown> | undefined): string | undefined {
  const examples = schema?.examples;
  const first = Array.isArray(examples) ? examples[0] : undefined;
  if (first === undefined || first === null || typeof first === 'object') return undefined;
  return String(first);
}

/** The closest accepted name to a misspelt one (at most two edits), to suggest it. */
function closest(name: string, accepted: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of accepted) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(
        (prev[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    prev = row;
  }
  return prev[b.length] as number;
}

/** What one Ajv error means, after "<field> ": "must be at most 200 characters (this one has 240)". */
export function describeIssue(issue: AjvIssue): string {
  const p = issue.params;
  const parent = issue.parentSchema;
  const example = exampleOf(parent);
  const eg = example !== undefined ? `, e.g. ${example}` : '';
  switch (issue.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties': {
      const accepted = Object.keys((parent?.properties as Record<string, unknown> | undefined) ?? {});
      const guess = closest(String(p.additionalProperty), accepted);
      return guess ? `is not an accepted field (did you mean ${guess}?)` : 'is not an accepted field';
    }
    case 'type':
      return `must be ${String(p.type)
        .split(',')
        .map((t) => typeWords(t))
        .join(' or ')}${eg}`;
    case 'enum':
      return `must be one of: ${((p.allowedValues as unknown[]) ?? []).map(String).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'format':
      return FORMATS[String(p.format)] ?? `must be a valid ${String(p.format)}${eg}`;
    case 'pattern':
      return (
        PATTERNS[String(p.pattern)] ??
        listPatternMessage(String(p.pattern)) ??
        `is not in the expected form${eg || ' (see the field’s description)'}`
      );
    case 'minLength':
      return Number(p.limit) === 1 ? 'must not be empty' : `must be at least ${plural(Number(p.limit), 'character')}`;
    case 'maxLength': {
      const got = typeof issue.data === 'string' ? ` (this one has ${[...issue.data].length})` : '';
      return `must be at most ${plural(Number(p.limit), 'character')}${got}`;
    }
    case 'minimum':
      return `must be at least ${String(p.limit)}`;
    case 'maximum':
      return `must be at most ${String(p.limit)}`;
    case 'exclusiveMinimum':
      return `must be greater than ${String(p.limit)}`;
    case 'exclusiveMaximum':
      return `must be less than ${String(p.limit)}`;
    case 'multipleOf':
      return `must be a multiple of ${String(p.multipleOf)}`;
    case 'minItems':
      return Number(p.limit) === 1 ? 'must not be empty' : `must have at least ${plural(Number(p.limit), 'item')}`;
    case 'maxItems':
      return `must have at most ${plural(Number(p.limit), 'item')}`;
    case 'uniqueItems':
      return `must not list the same value twice (items ${String(p.j)} and ${String(p.i)} are equal)`;
    case 'minProperties':
      return Number(p.limit) === 1 ? 'must not be empty' : `must have at least ${plural(Number(p.limit), 'field')}`;
    case 'maxProperties':
      return `must have at most ${plural(Number(p.limit), 'field')}`;
    case 'dependentRequired':
    case 'dependencies':
      return `needs ${String(p.missingProperty)} too (given with ${String(p.property)})`;
    case 'not':
      return 'is not allowed here';
    case 'contains':
      return 'must contain at least one valid item';
    case 'discriminator': {
      // A oneOf told apart by a tag (OpenAPI discriminator): the tag is missing or names no branch.
      const branches = (parent?.oneOf as Branch[] | undefined) ?? [];
      const allowed = branches
        .map((b) => (b.properties as Record<string, Branch> | undefined)?.[String(p.tag)]?.const)
        .filter((v) => v !== undefined)
        .map(String)
        .join(', ');
      return p.tagValue === undefined ? `is required (one of: ${allowed})` : `must be one of: ${allowed}`;
    }
    case 'finiteNumber':
      return 'must be a finite number';
    default:
      return 'has an invalid value';
  }
}

interface Located {
  issue: AjvIssue;
  field: string;
  message: string;
}

function locate(issue: AjvIssue, context: string | undefined): Located {
  let field = issue.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (issue.keyword === 'required') {
    const missing = String(issue.params.missingProperty);
    field = field ? `${field}.${missing}` : missing;
  } else if (issue.keyword === 'discriminator') {
    const tag = String(issue.params.tag);
    field = field ? `${field}.${tag}` : tag;
  } else if (issue.keyword === 'additionalProperties') {
    const extra = String(issue.params.additionalProperty);
    field = field ? `${field}.${extra}` : extra;
  }
  if (!field) field = context === 'body' ? '(body)' : `(${context ?? 'request'})`;
  return { issue, field, message: describeIssue(issue) };
}

/** "be a string or be null" reads as "be a string or null": one "be" for a run of be-phrases. */
function joinBranches(phrases: string[]): string {
  // "…, e.g. 09:00, or null": null last, set apart when the phrase before it has an example.
  const others = phrases.filter((p) => p !== 'be null');
  if (others.length > 0 && others.length < phrases.length) {
    const rest = joinBranches(others);
    return `${rest}${rest.includes(', e.g.') || rest.includes('), or') ? ',' : ''} or null`;
  }
  return phrases
    .map((p, i) => (i > 0 && p.startsWith('be ') && phrases[i - 1]?.startsWith('be ') ? p.slice(3) : p))
    .join(' or ');
}

type Branch = Record<string, unknown>;

/**
 * The tag of a tagged union (`billing: {mode: 'batch'} | {mode: 'installments', …}`): the one
 * property that every branch fixes to a constant. Undefined for other unions (nullable fields).
 */
function tagOf(branches: Branch[]): { name: string; values: unknown[] } | undefined {
  if (branches.length < 2) return undefined;
  const first = branches[0]?.properties as Record<string, Branch> | undefined;
  for (const name of Object.keys(first ?? {})) {
    const values = branches.map((b) => (b.properties as Record<string, Branch> | undefined)?.[name]?.const);
    if (values.every((v) => v !== undefined)) return { name, values };
  }
  return undefined;
}

/**
 * Turns Ajv's errors into exactly one `{field, message}` per offending field, in words a
 * client can act on. A union makes Ajv report every branch; instead:
 *  - a tagged union (its branches told apart by a constant `mode`, `type`, …) reports the
 *    branch the value's tag names, or, for an unknown or missing tag, that the tag must be
 *    one of the branches' values;
 *  - any other union (a nullable field) reports the deeper problem when a branch failed
 *    inside the value, else sums the branches up as one message ("must be a string or null").
 */
export function validationDetails(issues: AjvIssue[], context: string | undefined): FieldIssue[] {
  const located = issues.filter((i) => i.keyword !== 'if').map((i) => locate(i, context));
  const dropped = new Set<Located>();
  const replaced = new Map<Located, { field?: string; message: string }>();
  for (const union of located) {
    if (union.issue.keyword !== 'anyOf' && union.issue.keyword !== 'oneOf') continue;
    if (dropped.has(union)) continue;
    const prefix = `${union.issue.schemaPath}/`;
    const branches = located.filter((l) => l !== union && l.issue.schemaPath.startsWith(prefix));
    const schemas = Array.isArray(union.issue.schema) ? (union.issue.schema as Branch[]) : [];
    const tag = tagOf(schemas);
    const data = union.issue.data;
    if (tag && data !== null && typeof data === 'object' && !Array.isArray(data)) {
      const given = (data as Record<string, unknown>)[tag.name];
      const chosen = tag.values.indexOf(given);
      if (chosen >= 0) {
        // Only the branch the tag names speaks; the union itself says nothing more.
        const own = `${prefix}${chosen}/`;
        for (const b of branches) if (!b.issue.schemaPath.startsWith(own)) dropped.add(b);
        dropped.add(union);
      } else {
        for (const b of branches) dropped.add(b);
        const field = union.field.startsWith('(') ? tag.name : `${union.field}.${tag.name}`;
        const allowed = tag.values.map(String).join(', ');
        replaced.set(union, {
          field,
          message: given === undefined ? `is required (one of: ${allowed})` : `must be one of: ${allowed}`,
        });
      }
      continue;
    }
    const deeper = branches.filter((l) => l.field !== union.field);
    for (const b of branches) if (b.field === union.field) dropped.add(b);
    if (deeper.length > 0) {
      dropped.add(union);
      continue;
    }
    // A union of constants (`'true' | 'false'`, a role) is a list of allowed values.
    const constants = schemas.filter((b) => b.type !== 'null').map((b) => b.const);
    if (constants.length > 0 && constants.every((c) => c !== undefined)) {
      const orNull = schemas.some((b) => b.type === 'null') ? ', or null' : '';
      replaced.set(union, { message: `must be one of: ${constants.map(String).join(', ')}${orNull}` });
      continue;
    }
    // Each branch as a verb phrase after "must" ("be a whole number", "be null", "not be blank"),
    // the first problem of each branch only.
    const firstOfBranch = new Map<string, string>();
    for (const b of branches) {
      const index = b.issue.schemaPath.slice(prefix.length).split('/')[0] as string;
      if (!firstOfBranch.has(index)) firstOfBranch.set(index, b.message.replace(/^must /, ''));
    }
    const kinds = [...firstOfBranch.values()].filter((k, i, all) => all.indexOf(k) === i);
    replaced.set(union, { message: kinds.length > 0 ? `must ${joinBranches(kinds)}` : 'has an invalid value' });
  }
  const seen = new Set<string>();
  const out: FieldIssue[] = [];
  for (const l of located) {
    if (dropped.has(l)) continue;
    const r = replaced.get(l);
    const field = r?.field ?? l.field;
    if (seen.has(field)) continue;
    seen.add(field);
    out.push({ field, message: r?.message ?? l.message });
  }
  return out;
}
