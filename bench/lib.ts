import pg from 'pg';
import { openDatabase } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';

/** Where benchmarks create their throw-away PostgreSQL databases. */
export const BENCH_PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** A new, migrated PostgreSQL database for one benchmark part; `drop()` removes it. */
export async function createBenchDatabase(label: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `crm_bench_${label}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: BENCH_PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = withDatabase(BENCH_PG_URL, name);
  const database = await openDatabase({ databaseUrl: url });
  await migrate(database);
  await database.close();
  return {
    url,
    drop: async () => {
      const c = new pg.Client({ connectionString: BENCH_PG_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** One benchmark part: runs its measurements and returns a Markdown section for the report. */
export interface BenchPart {
  name: string;
  run(): Promise<string>;
}

export const ratio = (service: number, baseline: number) => (baseline > 0 ? service / baseline : 0);
export const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
