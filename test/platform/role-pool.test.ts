import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { inlineParameters } from '../../src/db/role-pool.js';
import { createTestDatabase } from '../harness.js';

/**
 * The platform pool's statements travel as one simple-protocol message with their values
 * written in as literals (src/db/role-pool.ts): what a statement means must not change.
 */
describe('the platform pool (src/db/role-pool.ts)', () => {
  it('writes each $n outside quotes, comments and dollar quotes as a literal, and nothing else', () => {
    expect(
      inlineParameters(`SELECT '$1', "$2", $$ $1 $$, $t$ $2 $t$, E'\\'$1', $1 -- $2\n /* $2 /* $1 */ */ , $2, $10`, [
        1,
        "it's",
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        'ten\\',
      ]),
    ).toBe(`SELECT '$1', "$2", $$ $1 $$, $t$ $2 $t$, E'\\'$1', '1' -- $2\n /* $2 /* $1 */ */ , 'it''s', E'ten\\\\'`);
    expect(inlineParameters('SELECT $1', [null])).toBe('SELECT NULL');
    expect(() => inlineParameters('SELECT $2', [1])).toThrow(/No value for \$2/);
  });

  describe.skipIf(inject('database').kind !== 'postgres')('on PostgreSQL', () => {
    let database: Database;
    beforeAll(async () => {
      database = await createTestDatabase();
    });
    afterAll(async () => database?.close());

    it('answers what the same statement answers with parameters, as crm_platform', async () => {
      const text =
        'SELECT $1::int AS i, $2 AS s, $3::text[] AS a, $4::jsonb AS j, $5::bytea AS b, $6::timestamptz AS t, $7::boolean AS f, 3 = ANY($8) AS any, $9::text IS NULL AS n, current_user AS who';
      const values = [
        41,
        "quote ' backslash \\ dollar $1 $$",
        ['a', 'b"c', "d'e", 'f\\g', null],
        JSON.stringify({ k: "x'y\\z" }),
        Buffer.from([0, 1, 255]),
        new Date('2026-06-01T10:00:00.123Z'),
        false,
        [1, 2, 3],
        null,
      ];
      const [row] = await database.platformQuery({ text }, values);
      const pool = database.pool;
      if (!pool) throw new Error('no pool');
      const client = await pool.connect();
      try {
        await client.query('BEGIN; SET LOCAL ROLE crm_platform');
        const direct = await client.query({ text, values, rowMode: 'array' });
        await client.query('COMMIT');
        expect(row).toEqual(direct.rows[0]);
      } finally {
        client.release();
      }
      expect(row?.[9]).toBe('crm_platform');
    });
  });
});
