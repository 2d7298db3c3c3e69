import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgliteClient } from '../../src/db/pglite-client.js';

/*
 * src/db/pglite-client.ts answers Drizzle in place of PGlite's own query/exec/transaction: the
 * results must be PGlite's, value for value (types parsed by PGlite's parsers, parameters
 * converted by the type PostgreSQL infers), errors of the same class with the same fields.
 * Each case runs on both and compares. A PGlite of its own (any TEST_DATABASE_URL is irrelevant).
 */
let pglite: PGlite;
let client: PgliteClient;

const TYPED = `SELECT $1::int AS i, $2::bigint AS big, 9007199254740993::bigint AS huge, $3::numeric AS num,
  $4::timestamptz AS ts, $5::date AS d, $6::text[] AS tags, $7::jsonb AS doc, $8::bool AS flag,
  $9::bytea AS bin, $10::text AS nothing, $11::int[] AS ints, '1 day'::interval AS span, 1.5::float8 AS f,
  'x'::varchar AS v, $12::timestamptz[] AS stamps`;
const VALUES = [
  7,
  12345678901n,
  '12.50',
  new Date('2026-03-04T05:06:07.891Z'),
  '2026-03-04',
  ['a', 'b "c"', null],
  { a: [1, 'two'], n: null },
  true,
  new Uint8Array([0, 1, 255]),
  null,
  [1, 2, 3],
  [new Date('2026-01-01T00:00:00Z')],
];
/** Drizzle's own parser overrides on PGlite: timestamps, dates and intervals as text. */
const DRIZZLE_PARSERS = {
  1114: (v: string) => v,
  1184: (v: string) => v,
  1186: (v: string) => v,
  1082: (v: string) => v,
  1185: (v: string) => v,
};

beforeAll(async () => {
  pglite = await PGlite.create();
  client = new PgliteClient(pglite);
  await pglite.exec(`CREATE TABLE t (id int PRIMARY KEY, note text NOT NULL);
    INSERT INTO t VALUES (1, 'one'), (2, 'two');`);
});
afterAll(async () => {
  await pglite.close();
});

describe('PgliteClient', () => {
  it('returns what PGlite returns for every type, as objects and as arrays, with or without parser overrides', async () => {
    for (const options of [
      undefined,
      { rowMode: 'array' as const },
      { parsers: DRIZZLE_PARSERS },
      { rowMode: 'array' as const, parsers: DRIZZLE_PARSERS },
    ]) {
      const expected = await pglite.query(TYPED, VALUES, options);
      // The second run uses the remembered parameter types.
      for (let i = 0; i < 2; i++) expect(await client.query(TYPED, VALUES, options)).toEqual(expected);
    }
  });

  it('returns the same counts and shapes for writes, empty results and several statements', async () => {
    const write = 'UPDATE t SET note = note WHERE id > $1';
    expect(await client.query(write, [0])).toEqual(await pglite.query(write, [0]));
    const none = 'SELECT id FROM t WHERE id < $1';
    expect(await client.query(none, [0])).toEqual(await pglite.query(none, [0]));
    const several =
      "SELECT 1 AS a; UPDATE t SET note = note; SELECT note FROM t ORDER BY id; SET LOCAL work_mem = '4MB'";
    expect(await client.exec(several)).toEqual(await pglite.exec(several));
  });

  it('throws errors of PGlite’s class with the same code, fields and statement', async () => {
    const insert = 'INSERT INTO t (id, note) VALUES ($1, $2)';
    const theirs = await pglite.query(insert, [1, 'again']).catch((e: unknown) => e);
    const ours = await client.query(insert, [1, 'again']).catch((e: unknown) => e);
    expect(ours).toBeInstanceOf((theirs as object).constructor);
    for (const field of ['message', 'code', 'detail', 'constraint', 'table', 'severity', 'query', 'params']) {
      expect((ours as Record<string, unknown>)[field], field).toEqual((theirs as Record<string, unknown>)[field]);
    }
    expect((ours as { code: string }).code).toBe('23505');
    const broken = await client.query('SELECT nope FROM t WHERE id = $1', [1]).catch((e: unknown) => e);
    expect((broken as { code: string }).code).toBe('42703');
    // The database is usable afterwards.
    expect((await client.query('SELECT count(*)::int AS n FROM t')).rows).toEqual([{ n: 2 }]);
  });

  it('commits a transaction with its settings sent with the first statement, and rolls back on error', async () => {
    const seen = await client.transaction(async (tx) => {
      await tx.query('INSERT INTO t (id, note) VALUES ($1, $2)', [3, 'three']);
      return (await tx.query<{ s: string }>("SELECT current_setting('app.x', true) AS s")).rows[0]?.s;
    }, "SELECT set_config('app.x', 'inside', true)");
    expect(seen).toBe('inside');
    expect((await client.query("SELECT current_setting('app.x', true) AS s")).rows).toEqual([{ s: '' }]);
    await expect(
      client.transaction(async (tx) => {
        await tx.query('INSERT INTO t (id, note) VALUES ($1, $2)', [4, 'four']);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect((await client.query('SELECT id FROM t ORDER BY id', [], { rowMode: 'array' })).rows).toEqual([
      [1],
      [2],
      [3],
    ]);
    // A transaction that ran no statement sent nothing and leaves nothing open.
    expect(await client.transaction(async () => 'idle', "SELECT set_config('app.x', 'never', true)")).toBe('idle');
    expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('refuses to commit an aborted transaction as PGlite does (25P02) and rolls it back', async () => {
    const err = await client
      .transaction(async (tx) => {
        await tx.query('INSERT INTO t (id, note) VALUES ($1, $2)', [5, 'five']);
        await tx.exec('SAVEPOINT s; SELECT 1/0').catch(() => undefined);
        return 'swallowed';
      })
      .catch((e: unknown) => e);
    expect((err as { code: string }).code).toBe('25P02');
    expect((await client.query('SELECT count(*)::int AS n FROM t WHERE id = 5')).rows).toEqual([{ n: 0 }]);
  });

  it('hands a NOTIFY committed through it to the listeners registered through it', async () => {
    const heard: string[] = [];
    const stop = await client.listen('pglite_client_test', (payload) => heard.push(payload));
    await client.transaction(async (tx) => {
      await tx.query("SELECT pg_notify('pglite_client_test', $1)", ['hello']);
    });
    await client.query("SELECT pg_notify('pglite_client_test', 'again')");
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(heard).toEqual(['hello', 'again']);
    await stop();
    await client.query("SELECT pg_notify('pglite_client_test', 'unheard')");
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(heard).toEqual(['hello', 'again']);
  });
});
