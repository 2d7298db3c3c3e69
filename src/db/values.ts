import { SQL, StringChunk, sql } from 'drizzle-orm';
import { isCitus } from './citus.js';
import type { Database } from './client.js';

/** PostgreSQL's limit on one statement's bind parameters (the protocol counts them in 16 bits). */
export const MAX_BIND_PARAMETERS = 65_535;

/**
 * Rows for a multi-row `VALUES` list, cut into chunks that each fit one statement: at most
 * `perRow` values per row, plus `others` parameters the statement has besides its rows, below
 * PostgreSQL's limit on bind parameters (which also bounds the statement's size when the values
 * are written as literals, below).
 *
 * Why `VALUES` and not one JSON or array parameter read by `jsonb_to_recordset` / `unnest`: on
 * Citus (docs/scaling.md) an `INSERT … SELECT` from such a parameter is planned on the
 * coordinator and copied into the shard, which Citus refuses under row-level security, while a
 * multi-row `INSERT … VALUES` naming one organization is routed to its shard as it stands.
 */
export function chunked<T>(rows: readonly T[], perRow: number, others = 0): T[][] {
  const size = Math.max(1, Math.floor((MAX_BIND_PARAMETERS - others) / Math.max(1, perRow)));
  const chunks: T[][] = [];
  for (let i = 0; i < rows.length; i += size) chunks.push(rows.slice(i, i + size));
  return chunks;
}

/**
 * A value as an SQL literal: text as an escaped string (`E'…'`, its backslashes and quotes
 * doubled, so it reads the same whatever `standard_conforming_strings` says), numbers and
 * booleans as themselves, null as NULL. Anything else is a programming error.
 */
export function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return `E'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  throw new TypeError(`No SQL literal for ${typeof value} ${String(value)}`);
}

/**
 * The time `n` microseconds after `at` (a Date's time, so whole milliseconds), as ISO text with
 * microseconds: rows written together keep their order by time (`created_at`) as plain literals.
 * Written `'…'::timestamptz + n * interval '1 microsecond'` instead, each row was an expression
 * PostgreSQL parsed and resolved (two operators), which doubled the time of an 8,000-row INSERT
 * (schedules bench).
 */
export function microsecondsAfter(at: Date, n: number): string {
  const ms = at.getTime() + Math.floor(n / 1000);
  return `${new Date(ms).toISOString().slice(0, 23)}${String(n % 1000).padStart(3, '0')}Z`;
}

/**
 * `VALUES (…), (…)` for `rows`: each plain cell (text, number, boolean, null) written as a
 * literal (`literal`), a cell that is SQL (an expression, a cast) as it is. Literals rather than
 * one bind parameter per cell: a batch of 500 invoices has 5,000 lines of 10 values, and the
 * query builder and the driver spend about ten times longer on 50,000 parameters than on the
 * JSON text the statement used to take, while PostgreSQL parses the literals in a few ms. In
 * `INSERT … VALUES` each literal takes the type of its target column; elsewhere cast them.
 */
export function valuesList(rows: ReadonlyArray<ReadonlyArray<unknown>>): SQL {
  const chunks: Array<StringChunk | SQL> = [];
  let text = 'VALUES ';
  rows.forEach((row, r) => {
    text += r === 0 ? '(' : ', (';
    row.forEach((cell, c) => {
      if (c > 0) text += ', ';
      if (cell instanceof SQL) {
        chunks.push(new StringChunk(text), cell);
        text = '';
      } else text += literal(cell);
    });
    text += ')';
  });
  chunks.push(new StringChunk(text));
  return new SQL(chunks);
}

/**
 * How this process's multi-row statements take their rows (`rowsSource`): as a VALUES list of
 * literals, which Citus routes to the organization's shard (see `chunked`), or, on PostgreSQL and
 * PGlite, as one array per column read by `unnest`, which PostgreSQL parses several times faster
 * than thousands of separate literals (a schedule's visits; a GPS batch writes its own array
 * literals on the same choice, `rowsAsArrays`).
 * VALUES until `chooseRowsPath` has found the database is not Citus; once any database of the
 * process is Citus (tests open several in one process; tenancy.ts notes it on every Citus
 * transaction), VALUES for good: it is right everywhere, arrays only off Citus.
 */
let arrays = false;
let citusSeen = false;

/**
 * Asks the database once, at start (buildApp, the worker), whether it is Citus, and chooses.
 * A database that cannot answer now leaves the choice as it was (VALUES is right everywhere).
 */
export async function chooseRowsPath(database: Pick<Database, 'platformQuery'>): Promise<void> {
  const citus = await isCitus(database).catch(() => undefined);
  if (citus === true) noteCitus();
  else if (citus === false) arrays = !citusSeen;
}

/** A Citus database is in use in this process: rows go as VALUES lists from now on. */
export function noteCitus(): void {
  citusSeen = true;
  arrays = false;
}

/** Whether rows go as arrays (for a test that checks both ways, and the docs). */
export const rowsAsArrays = () => arrays;

/**
 * The rows of a multi-row INSERT, or of a CTE, as this process takes them (`chooseRowsPath`):
 * `VALUES (…), (…)` (valuesList), or `SELECT * FROM unnest($1::type[], …)` with one array per
 * column, typed by `types` (one SQL type name per column). Both read the same after
 * `INSERT INTO t (columns)` or as `WITH v(columns) AS (…)`. Cells are plain values (no SQL).
 */
export function rowsSource(rows: ReadonlyArray<ReadonlyArray<unknown>>, types: readonly string[]): SQL {
  if (!arrays) return valuesList(rows);
  const columns = types.map((type, c) => sql`${sql.param(rows.map((row) => row[c] ?? null))}::${sql.raw(type)}[]`);
  return sql`SELECT * FROM unnest(${sql.join(columns, sql`, `)})`;
}
