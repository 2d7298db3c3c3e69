import { readdirSync, readFileSync } from 'node:fs';
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

/**
 * CPU time used so far, in µs: this process's (user + system), and the local PostgreSQL
 * server's (every process named `postgres`, read from /proc; null where there is no /proc).
 * Two readings around a timed window give CPU per operation, which says more than a rate on
 * a small or busy machine: a round can be slow because the machine was, its CPU per
 * operation much less so.
 */
export function cpuNow(): { node: number; postgres: number | null } {
  const usage = process.cpuUsage();
  return { node: usage.user + usage.system, postgres: postgresCpu() };
}

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ: 100 on Linux). */
const USER_HZ = 100;

function postgresCpu(): number | null {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  let ticks = 0;
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    if (!stat.includes(' (postgres) ')) continue;
    // Fields after "(comm) ": state is 0, utime 11, stime 12 (proc(5)).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1_000_000) / USER_HZ;
}
