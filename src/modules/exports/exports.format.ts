/*
 * Rows in their REST shape, as NDJSON lines or CSV records (operations.md §7).
 * The shape comes from the list route's own response schema: `restShape` keeps
 * exactly the properties the route would send (as Fastify's serializer does),
 * Dates as ISO 8601 strings; the CSV columns are that schema's leaves, objects
 * flattened to dotted names (`billing.city`), lists of words joined by "; " and lists of
 * records written as JSON.
 */

type Schema = Record<string, unknown>;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

/** The object variant of a schema (itself, or the object member of a nullable union), if any. */
function objectSchema(schema: Schema): (Schema & { properties: Record<string, Schema> }) | undefined {
  if (isPlainObject(schema.properties)) return schema as Schema & { properties: Record<string, Schema> };
  const variants = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (!Array.isArray(variants)) return undefined;
  const objects = variants.map(objectSchema).filter((s) => s !== undefined);
  return objects.length === 1 ? objects[0] : undefined;
}

function arraySchema(schema: Schema): Schema | undefined {
  if (schema.type === 'array') return schema;
  const variants = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  return Array.isArray(variants) ? variants.find((v) => v.type === 'array') : undefined;
}

/** `value` as the route would serialize it under `schema`. */
export function restShape(schema: Schema, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) {
    const items = arraySchema(schema)?.items as Schema | undefined;
    return items ? value.map((v) => restShape(items, v)) : value.map((v) => restShape({}, v));
  }
  if (isPlainObject(value)) {
    const obj = objectSchema(schema);
    const out: Record<string, unknown> = {};
    if (!obj) {
      for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = restShape({}, v);
      return out;
    }
    for (const [k, propSchema] of Object.entries(obj.properties)) {
      if (Object.hasOwn(value, k) && value[k] !== undefined) out[k] = restShape(propSchema, value[k]);
    }
    return out;
  }
  return value;
}

/** The item schema of a list response `{data: [item]}`. */
export function itemSchemaOf(listResponse: unknown): Schema {
  const data = objectSchema(listResponse as Schema)?.properties.data;
  const items = data ? arraySchema(data)?.items : undefined;
  if (!items) throw new Error('export: a list response schema must be {data: [item]}');
  return items as Schema;
}

/** Dotted column paths of an item schema: objects flattened, arrays and free-form objects one column. */
export function csvColumns(schema: Schema, prefix = ''): string[] {
  const obj = objectSchema(schema);
  if (!obj || arraySchema(schema)) return [prefix];
  const keys = Object.keys(obj.properties);
  if (keys.length === 0) return [prefix];
  return keys.flatMap((k) => csvColumns(obj.properties[k] as Schema, prefix ? `${prefix}.${k}` : k));
}

function at(row: unknown, path: string): unknown {
  let v: unknown = row;
  for (const part of path.split('.')) {
    if (!isPlainObject(v) || !Object.hasOwn(v, part)) return undefined;
    v = v[part];
  }
  return v;
}

/**
 * An array in one cell, as a spreadsheet user reads it: a list of words (tags, emails) joined
 * by "; ", an empty list an empty cell; a list of records (line items) stays JSON.
 */
function csvList(values: unknown[]): string {
  if (values.every((v) => v === null || typeof v !== 'object')) return values.map((v) => String(v ?? '')).join('; ');
  return JSON.stringify(values);
}

/** RFC 4180 field: quoted when it holds a comma, quote, CR or LF (quotes doubled). */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = Array.isArray(value)
    ? csvList(value)
    : typeof value === 'object'
      ? JSON.stringify(value)
      : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvRecord(fields: unknown[]): string {
  return `${fields.map(csvField).join(',')}\r\n`;
}

/** One CSV record of a row already in REST shape. */
export function csvRow(columns: string[], shaped: unknown): string {
  return csvRecord(columns.map((c) => at(shaped, c)));
}
