import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import { Ajv, type Options, type SchemaValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * Bodies are validated strictly: no type coercion ("5" is not 5) and no silent
 * removal of unknown fields (they are refused, decisions §3). Query strings and
 * path parameters arrive as text, so there numbers and booleans are coerced.
 * `allErrors` so a client learns every bad field at once (one `details` entry per
 * field, decisions §3); bodies are capped at 1 MiB, which bounds the work.
 */
function makeAjv(opts: Options): Ajv {
  // strictNumbers: a JSON body may hold 1e309, which JSON.parse turns into Infinity; refuse it.
  const ajv = new Ajv({
    allErrors: true,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    strictNumbers: true,
    // `oneOf` + `discriminator` (OpenAPI): a tagged union is checked against the branch its tag
    // names, so errors name that branch's fields instead of every branch's.
    discriminator: true,
    // Each error carries its schema and value, so its message can give the expected form and an
    // example (platform/validation-messages.ts). Costs nothing until a request is invalid.
    verbose: true,
    ...opts,
  });
  // ajv-formats' default export is typed for CommonJS; it is the plugin function.
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  return ajv;
}

const bodyAjv = makeAjv({ coerceTypes: false });
const textAjv = makeAjv({ coerceTypes: 'array' });

/**
 * Ajv coerces "1e309" to Infinity and does not check the type again afterwards; with
 * strictNumbers, non-finite values then skip every numeric keyword (minimum, maximum), so
 * Infinity would reach SQL. Every number read from text carries this keyword (on a copy: the
 * documented schema is unchanged), which runs after coercion.
 */
textAjv.addKeyword({
  keyword: 'finiteNumber',
  errors: true,
  validate: finiteNumber,
});

function finiteNumber(_flag: unknown, data: unknown): boolean {
  if (typeof data !== 'number' || Number.isFinite(data)) return true;
  (finiteNumber as SchemaValidateFunction).errors = [
    { keyword: 'finiteNumber', message: 'must be a finite number', params: {} },
  ];
  return false;
}

function finiteTextNumbers(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(finiteTextNumbers);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) out[key] = finiteTextNumbers(value);
  const types = Array.isArray(out.type) ? out.type : [out.type];
  if (types.includes('number') || types.includes('integer')) out.finiteNumber = true;
  return out;
}

// One copy per schema object, so a schema shared by routes compiles once (Ajv caches by identity).
const finiteCopies = new WeakMap<object, object>();

/**
 * A query string names only the parameters its route documents: a misspelt filter
 * (`stauts=overdue`) is a 400, never silently ignored (which would answer every record).
 * Applied to the compiled copy, so a query schema that forgot to say so is strict too.
 */
function strictQuery(schema: object): object {
  const s = schema as { type?: unknown; additionalProperties?: unknown };
  return s.type === 'object' && s.additionalProperties === undefined ? { ...s, additionalProperties: false } : s;
}

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  if (httpPart === 'body') return bodyAjv.compile(schema) as ReturnType<FastifySchemaCompiler<object>>;
  let copy = finiteCopies.get(schema);
  if (!copy) {
    copy = finiteTextNumbers(httpPart === 'querystring' ? strictQuery(schema) : schema) as object;
    finiteCopies.set(schema, copy);
  }
  return textAjv.compile(copy) as ReturnType<FastifySchemaCompiler<object>>;
};

/**
 * A compiled check or serializer, built on its first call rather than when the route is
 * registered: start-up compiled ajv validators and fast-json-stringify serializers for every
 * route and status (hundreds; about 2 s of CPU before /readyz), while a process serves a few of
 * them in its first seconds. The first request of a route pays its own compilation (a few ms);
 * a schema that does not compile still fails, on that first request, and the suite reaches every route.
 */
function lazy<F extends (data: unknown) => unknown>(build: () => F): F & { errors?: unknown } {
  let compiled: F | undefined;
  const call = ((data: unknown) => {
    compiled ??= build();
    const result = compiled(data);
    // Fastify reads a failed validation's errors from the function it was handed.
    call.errors = (compiled as { errors?: unknown }).errors;
    return result;
  }) as F & { errors?: unknown };
  return call;
}

export const lazyValidatorCompiler: FastifySchemaCompiler<object> = (route) =>
  lazy(() => validatorCompiler(route) as (data: unknown) => unknown) as ReturnType<FastifySchemaCompiler<object>>;

/**
 * Fastify's own serializer factory (fast-json-stringify, the package Fastify itself builds its
 * serializers with; a direct dependency at Fastify's version), each route's serializer built lazily.
 */
export function lazySerializerFactory(): SerializerSelector.SerializerFactory {
  const build = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options);
    return (route) => lazy(() => compile({ ...route, schema: nullableAsTypeList(route.schema) }));
  };
}

/** What a plain typed branch may carry besides `type` and still be checked by its type alone. */
const ANNOTATIONS = new Set([
  'type',
  'description',
  'title',
  'examples',
  'default',
  'deprecated',
  'readOnly',
  '$comment',
]);
const SIMPLE_TYPES = new Set(['string', 'number', 'integer', 'boolean']);

/**
 * The serializer's copy of a response schema, where `Nullable(T)` of a plain type (`anyOf: [{type:
 * 'string'}, {type: 'null'}]`, platform/schemas.ts) reads `type: ['string', 'null']`: the same
 * values pass and the same are refused (fast-json-stringify checks the type list by `typeof`,
 * `Number.isInteger` for integers), but an `anyOf` makes it call an Ajv validator per branch and
 * value, a dozen nullable fields per customer row (~10 µs of a customers page, about 1 % of its
 * CPU). Branches with any other keyword (format, enum, pattern, bounds) keep their `anyOf`, which
 * checks them. The documented schema is unchanged.
 */
export function nullableAsTypeList(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(nullableAsTypeList);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) out[key] = nullableAsTypeList(value);
  const branches = out.anyOf;
  if (!Array.isArray(branches) || branches.length !== 2) return out;
  const isNull = (b: Record<string, unknown>) => b.type === 'null' && Object.keys(b).length === 1;
  const [first, second] = branches as Array<Record<string, unknown>>;
  const typed = first && second && isNull(second) ? first : second && first && isNull(first) ? second : undefined;
  if (
    !typed ||
    typeof typed.type !== 'string' ||
    !SIMPLE_TYPES.has(typed.type) ||
    !Object.keys(typed).every((k) => ANNOTATIONS.has(k))
  ) {
    return out;
  }
  const { anyOf: _replaced, ...rest } = out;
  return { ...rest, type: [typed.type, 'null'] };
}
