import { SQL, StringChunk } from 'drizzle-orm';

/** PostgreSQL's limit on one statement's bind parameters (the protocol counts them in 16 bits). */
export const MAX_BIND_PARAMETERS = 65_535;

/**
 * Rows for a multi-row `VALUES` list, cut into chunks that each fit one statement: at most
 * `perRow` parameters per row, plus `others` parameters the statement has besides its rows.
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
 * `VALUES (…), (…)` for `rows`: each cell is a bind parameter, or SQL (an expression, a cast)
 * when it is one. Built as one flat list of chunks (the query builder walks it once), not a
 * template per row. Parameters are sent untyped: in `INSERT … VALUES` PostgreSQL gives each
 * the type of its target column; elsewhere cast them in the first row.
 */
export function valuesList(rows: ReadonlyArray<ReadonlyArray<unknown>>): SQL {
  const chunks: unknown[] = [new StringChunk('VALUES ')];
  rows.forEach((row, r) => {
    chunks.push(new StringChunk(r === 0 ? '(' : ', ('));
    row.forEach((cell, c) => {
      if (c > 0) chunks.push(new StringChunk(', '));
      // A plain value is a parameter; `undefined` would be dropped by the builder, so it is NULL.
      chunks.push(cell === undefined ? null : cell);
    });
    chunks.push(new StringChunk(')'));
  });
  return new SQL(chunks as ConstructorParameters<typeof SQL>[0]);
}
