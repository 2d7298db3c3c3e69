import { createRequire } from 'node:module';

/*
 * Values written into a statement's text as quoted literals, for the simple protocol (which
 * carries no parameters): the platform pool's one-message statements (role-pool.ts) and the
 * tenant transaction's deferred statements (pg-transaction.ts). A quoted literal is of unknown
 * type until its context decides, exactly as a parameter pg sends without a type (it sends
 * none), so the statement means what it meant with parameters.
 */

/** pg's conversion of a parameter value (not in its typings): text, a Buffer (bytea) or null. */
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as {
  prepareValue: (value: unknown) => string | Buffer | null;
};

/**
 * `text` with its `$n` parameters replaced by quoted literals of `values`; a `$n` inside a
 * quoted string, a quoted identifier, a comment or a dollar-quoted body is left as it is.
 */
export function inlineParameters(text: string, values: readonly unknown[]): string {
  if (values.length === 0) return text;
  const literals = values.map(literalOf);
  let out = '';
  let i = 0;
  let from = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i] as string;
    if (c === "'" || c === '"') {
      // A string ('' doubles a quote; E'…' also escapes with a backslash) or an identifier.
      const escapes = c === "'" && /[eE]/.test(text[i - 1] ?? '') && !/[\w$]/.test(text[i - 2] ?? '');
      i++;
      while (i < n) {
        if (escapes && text[i] === '\\') i += 2;
        else if (text[i] === c && text[i + 1] === c) i += 2;
        else if (text[i] === c) break;
        else i++;
      }
      i++;
    } else if (c === '-' && text[i + 1] === '-') {
      const end = text.indexOf('\n', i);
      i = end === -1 ? n : end + 1;
    } else if (c === '/' && text[i + 1] === '*') {
      let depth = 1;
      i += 2;
      while (i < n && depth > 0) {
        if (text[i] === '/' && text[i + 1] === '*') {
          depth++;
          i += 2;
        } else if (text[i] === '*' && text[i + 1] === '/') {
          depth--;
          i += 2;
        } else {
          i++;
        }
      }
    } else if (c === '$' && !/[\w$]/.test(text[i - 1] ?? '')) {
      const param = /^\$(\d+)/.exec(text.slice(i, i + 12));
      const tag = param ? undefined : /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(text.slice(i, i + 64));
      if (param) {
        const index = Number(param[1]) - 1;
        if (index < 0 || index >= literals.length) throw new Error(`No value for $${param[1]}`);
        out += `${text.slice(from, i)}${literals[index]}`;
        i += param[0].length;
        from = i;
      } else if (tag) {
        const end = text.indexOf(tag[0], i + tag[0].length);
        i = end === -1 ? n : end + tag[0].length;
      } else {
        i++;
      }
    } else {
      i++;
    }
  }
  return out + text.slice(from);
}

/** One value as pg would send it as a parameter, written as a quoted literal (NULL for null). */
function literalOf(value: unknown): string {
  const prepared = prepareValue(value);
  if (prepared === null) return 'NULL';
  // bytea, in its hex input form.
  const text = Buffer.isBuffer(prepared) ? `\\x${prepared.toString('hex')}` : String(prepared);
  return quote(text);
}

/**
 * pg's `escapeLiteral`, with native replaces instead of its loop over every character (the
 * worker's result batches are tens of KB of JSON, hundreds of times a second): quotes doubled,
 * and backslashes doubled in the E'' form, which means the same whatever
 * standard_conforming_strings says.
 */
function quote(text: string): string {
  const quoted = `'${text.replaceAll("'", "''")}'`;
  return text.includes('\\') ? `E${quoted.replaceAll('\\', '\\\\')}` : quoted;
}
