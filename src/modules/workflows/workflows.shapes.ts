import { EVENT_PAYLOADS } from '../event-payloads.js';
import { parsePath } from './workflows.conditions.js';

/*
 * Condition paths are checked against the one description of each catalog event's `data`
 * (src/modules/event-payloads.ts, the same schemas as the OpenAPI `webhooks` section).
 * A condition's path "cannot exist" when:
 *  - it is not a dotted path of identifiers and array indexes (`invoice.lineItems.0.amount`),
 *    or names `__proto__`/`prototype`/`constructor`;
 *  - its first segment is not a field of the trigger's data (`invoice.created` has
 *    invoiceId, invoiceNumber, amountDue, invoice — not `customer`);
 *  - below that it leaves the field's REST schema: a property the resource does not
 *    have, a segment under a scalar, a non-index under an array.
 * Below a field whose schema is open (no listed properties) any path is accepted.
 */

const SHAPES: ReadonlyMap<string, Readonly<Record<string, unknown>>> = new Map(
  [...EVENT_PAYLOADS].map(([event, schema]) => [event, schema.properties]),
);

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  const?: unknown;
  enum?: unknown[];
}

const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);

/** Whether `rest` can be walked inside `schema`. */
function fits(schema: JsonSchema, rest: readonly string[]): boolean {
  if (rest.length === 0) return true;
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return branches.some((b) => fits(b, rest));
  if (schema.allOf) return schema.allOf.some((b) => fits(b, rest));
  const [head, ...tail] = rest as [string, ...string[]];
  if (schema.properties) {
    if (!Object.hasOwn(schema.properties, head)) return false;
    return fits(schema.properties[head] as JsonSchema, tail);
  }
  if (schema.items) return /^[0-9]+$/.test(head) && fits(schema.items, tail);
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (schema.const !== undefined || schema.enum !== undefined) return false;
  if (types.length > 0 && types.every((t) => SCALAR_TYPES.has(t))) return false;
  // Open object or unknown: nothing to check against.
  return true;
}

/** Why `path` cannot exist in the data of `event`, or undefined when it can. */
export function pathProblem(event: string, path: string): string | undefined {
  const parts = parsePath(path);
  if (!parts) {
    return 'must be a dotted path of names and array indexes (e.g. invoice.total or amountDue)';
  }
  const shape = SHAPES.get(event);
  if (!shape) return undefined;
  const [root, ...rest] = parts as [string, ...string[]];
  if (!Object.hasOwn(shape, root)) {
    return `${event} data has no field "${root}" (fields: ${Object.keys(shape).join(', ')})`;
  }
  if (!fits(shape[root] as JsonSchema, rest)) return `${path} does not exist in ${event} data`;
  return undefined;
}

/** The trigger data's top-level fields of a catalog event (documentation, tests). */
export function dataFields(event: string): string[] {
  return Object.keys(SHAPES.get(event) ?? {});
}
