import { sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import {
  chooseRowsPath,
  chunked,
  literal,
  MAX_BIND_PARAMETERS,
  microsecondsAfter,
  rowsAsArrays,
  rowsSource,
  valuesList,
} from './values.js';

describe('VALUES lists (src/db/values.ts)', () => {
  it('writes text as an escaped literal that reads the same whatever standard_conforming_strings says', () => {
    expect(literal("O'Brien \\ 'Lawn'")).toBe("E'O''Brien \\\\ ''Lawn'''");
    expect([literal(null), literal(undefined), literal(12), literal(-0.5), literal(true)]).toEqual([
      'NULL',
      'NULL',
      '12',
      '-0.5',
      'true',
    ]);
    expect(() => literal(Number.NaN)).toThrow();
    expect(() => literal({})).toThrow();
  });

  it('keeps SQL cells and their parameters where they stand', () => {
    const q = new PgDialect().sqlToQuery(
      sql`INSERT INTO t (a, b, c) ${valuesList([
        ['x', 1, sql`${'p'}::date`],
        [null, false, sql`${'q'}::date`],
      ])}`,
    );
    expect(q.sql).toBe("INSERT INTO t (a, b, c) VALUES (E'x', 1, $1::date), (NULL, false, $2::date)");
    expect(q.params).toEqual(['p', 'q']);
  });

  it('cuts rows into chunks below the parameter limit', () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => i);
    const chunks = chunked(rows, 10, 5);
    expect(chunks.map((c) => c.length)).toEqual([6553, 6553, 6553, 341]);
    expect(Math.max(...chunks.map((c) => c.length * 10 + 5))).toBeLessThanOrEqual(MAX_BIND_PARAMETERS);
  });

  it('writes a time n microseconds on as plain ISO text, carrying into the next millisecond and second', () => {
    const at = new Date('2026-11-28T19:59:59.998Z');
    expect(microsecondsAfter(at, 0)).toBe('2026-11-28T19:59:59.998000Z');
    expect(microsecondsAfter(at, 999)).toBe('2026-11-28T19:59:59.998999Z');
    expect(microsecondsAfter(at, 1000)).toBe('2026-11-28T19:59:59.999000Z');
    expect(microsecondsAfter(at, 2345)).toBe('2026-11-28T20:00:00.000345Z');
  });

  it('takes rows as typed arrays once the database is known not to be Citus (the VALUES path: the Citus test)', async () => {
    // A database that says it has no citus extension; one that cannot answer changes nothing.
    await expect(chooseRowsPath({ platformQuery: async () => Promise.reject(new Error('down')) })).resolves.toBe(
      undefined,
    );
    await chooseRowsPath({ platformQuery: async () => [[false]] });
    expect(rowsAsArrays()).toBe(true);
    const q = new PgDialect().sqlToQuery(
      sql`INSERT INTO t (a, b) ${rowsSource(
        [
          ['x', 1],
          ['y', null],
        ],
        ['text', 'int'],
      )}`,
    );
    expect(q.sql).toBe('INSERT INTO t (a, b) SELECT * FROM unnest($1::text[], $2::int[])');
    expect(q.params).toEqual([
      ['x', 'y'],
      [1, null],
    ]);
  });
});
