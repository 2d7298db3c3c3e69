import { Ajv, type Options } from 'ajv';
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
  const ajv = new Ajv({ allErrors: true, useDefaults: true, removeAdditional: false, strict: false, ...opts });
  // ajv-formats' default export is typed for CommonJS; it is the plugin function.
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  return ajv;
}

const bodyAjv = makeAjv({ coerceTypes: false });
const textAjv = makeAjv({ coerceTypes: 'array' });

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  return ajv.compile(schema) as ReturnType<FastifySchemaCompiler<object>>;
};
