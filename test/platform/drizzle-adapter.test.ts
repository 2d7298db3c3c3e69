import { readFileSync } from 'node:fs';
import { drizzle } from 'drizzle-orm/node-postgres';
import { PgDialect } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/client.js';
import {
  arrayRows,
  poolTransactionParts,
  transactionOnClient,
  VERIFIED_DRIZZLE_VERSION,
} from '../../src/db/drizzle-adapter.js';
import * as schema from '../../src/db/schema/index.js';

/*
 * src/db/drizzle-adapter.ts reaches into drizzle-orm internals (kept for measured
 * speed and a pool-leak fix). This test fails loudly, naming the file to re-check,
 * when an upgrade changes what it relies on. No database is needed: a Pool connects lazily.
 */
const RECHECK = 'drizzle-orm changed: re-verify src/db/drizzle-adapter.ts (and bench/parts/customers.ts), then update';

describe('the drizzle-orm adapter', () => {
  it('runs on the drizzle-orm version it was verified against', () => {
    const file = new URL('../../node_modules/drizzle-orm/package.json', import.meta.url);
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { version: string };
    expect(pkg.version, `${RECHECK} VERIFIED_DRIZZLE_VERSION`).toBe(VERIFIED_DRIZZLE_VERSION);
  });

  it('finds the session parts of a pg Pool handle and builds a transaction on a client', () => {
    const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none', max: 1 });
    try {
      const db = drizzle({ client: pool, schema }) as unknown as Db;
      const parts = poolTransactionParts(db);
      expect(parts, RECHECK).toBeDefined();
      expect(parts?.pool, RECHECK).toBe(pool);
      expect(parts?.dialect, RECHECK).toBeInstanceOf(PgDialect);
      expect(parts?.options, RECHECK).toBeTypeOf('object');
      expect(parts?.schema?.fullSchema, RECHECK).toHaveProperty('invoices');
      // A transaction bound to a client: the query builder must be there and build SQL for that client.
      const fakeClient = { query: async () => ({ rows: [], fields: [] }) } as unknown as pg.PoolClient;
      const tx = transactionOnClient(parts as NonNullable<typeof parts>, fakeClient);
      expect(typeof tx.select, RECHECK).toBe('function');
      expect(tx.select().from(schema.invoices).toSQL().sql, RECHECK).toMatch(/from "invoices"/);
    } finally {
      void pool.end();
    }
  });

  it("runs arrayRows on the transaction's own client, rows as arrays", async () => {
    const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none', max: 1 });
    try {
      const parts = poolTransactionParts(drizzle({ client: pool, schema }) as unknown as Db);
      const sent: unknown[] = [];
      const fakeClient = {
        query: async (config: unknown) => {
          sent.push(config);
          return { rows: [[1, 'a']], fields: [] };
        },
      } as unknown as pg.PoolClient;
      const tx = transactionOnClient(parts as NonNullable<typeof parts>, fakeClient);
      expect(await arrayRows(tx, 'SELECT $1', [1]), RECHECK).toEqual([[1, 'a']]);
      expect(sent, RECHECK).toEqual([{ text: 'SELECT $1', values: [1], rowMode: 'array' }]);
    } finally {
      void pool.end();
    }
  });

  it('answers undefined for a handle that is not over a pg Pool', () => {
    const client = new pg.Client({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
    const db = drizzle({ client, schema }) as unknown as Db;
    expect(poolTransactionParts(db)).toBeUndefined();
  });
});
