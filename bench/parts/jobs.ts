import pg from 'pg';
import { openDatabase } from '../../src/db/client.js';
import { drive, type Run, signedInOwner, startService } from '../http.js';
import { type BenchPart, createBenchDatabase, fmt, ratio } from '../lib.js';

const SMALL = 10_000;
const LARGE = 1_000_000;
/** A busy landscaping company: about forty jobs a day, every day. */
const PER_DAY = 40;
const DURATION_S = 5;
const CONNECTIONS = 10;

/**
 * `n` jobs at PER_DAY a day, ending on 2026-12-31 (row g on day g / PER_DAY), in date order
 * like real bookings; a fifth of them per status, one customer.
 */
function seedSql(organizationId: string, customerId: string, n: number): string {
  const days = Math.ceil(n / PER_DAY);
  return `INSERT INTO jobs (id, organization_id, customer_id, status, scheduled_date, assigned_to, services)
    SELECT 'job_b${n}_' || lpad(g::text, 7, '0'), '${organizationId}', '${customerId}',
           (ARRAY['scheduled','in_progress','completed','canceled','on_hold'])[1 + g % 5],
           DATE '2026-12-31' - ${days} + g / ${PER_DAY},
           CASE WHEN g % 7 = 0 THEN ARRAY['usr_crew_' || (g % 13)] ELSE '{}'::text[] END,
           ARRAY['Mowing']
    FROM generate_series(1, ${n}) AS g`;
}

interface Org {
  n: number;
  cookie: string;
  organizationId: string;
}

interface Case {
  label: string;
  path: string;
  connections: number;
}

/** First page, a cursor page at 90 % of the list, a 92-day calendar in the middle of the history. */
function casesFor(n: number): Case[] {
  const days = Math.ceil(n / PER_DAY);
  const mid = new Date(Date.UTC(2026, 11, 31) - Math.floor(days / 2) * 86_400_000);
  const end = new Date(mid.getTime() + 91 * 86_400_000);
  const day = (d: Date) => d.toISOString().slice(0, 10);
  return [
    { label: 'first page (limit 50)', path: '/api/jobs?limit=50', connections: CONNECTIONS },
    {
      label: 'cursor page at 90 %',
      path: `/api/jobs?limit=50&startingAfter=job_b${n}_${String(Math.round(n * 0.9)).padStart(7, '0')}`,
      connections: CONNECTIONS,
    },
    {
      label: `calendar, 92 days (~${fmt(92 * PER_DAY)} jobs), one client`,
      path: `/api/jobs/calendar?startDate=${day(mid)}&endDate=${day(end)}`,
      connections: 1,
    },
  ];
}

export const jobsBench: BenchPart = {
  name: 'jobs',
  async run() {
    const bench = await createBenchDatabase('jobs');
    const database = await openDatabase({ databaseUrl: bench.url });
    const results: Array<{ n: number; label: string; run: Run }> = [];
    let seedSeconds = 0;
    try {
      const { app, base } = await startService(database);
      const orgs: Org[] = [];
      const admin = new pg.Client({ connectionString: bench.url });
      await admin.connect();
      try {
        for (const n of [SMALL, LARGE]) {
          const owner = await signedInOwner(app, `Jobs ${n}`);
          const customer = await app.inject({
            method: 'POST',
            url: '/api/customers',
            headers: { cookie: owner.cookie },
            payload: { firstName: 'Bench' },
          });
          const started = Date.now();
          await admin.query(seedSql(owner.organizationId, customer.json().data.id, n));
          seedSeconds += (Date.now() - started) / 1000;
          orgs.push({ n, ...owner });
        }
        await admin.query('VACUUM ANALYZE jobs');
      } finally {
        await admin.end();
      }
      try {
        for (const org of orgs) {
          for (const c of casesFor(org.n)) {
            const check = await fetch(`${base}${c.path}`, { headers: { cookie: org.cookie } });
            const body = (await check.json()) as { data: unknown[] };
            if (check.status !== 200 || body.data.length === 0)
              throw new Error(`check failed: ${c.path} ${check.status}`);
            results.push({
              n: org.n,
              label: c.label,
              run: await drive(`${base}${c.path}`, { cookie: org.cookie }, DURATION_S, c.connections),
            });
          }
        }
      } finally {
        await app.close();
      }
    } finally {
      await database.close();
      await bench.drop();
    }
    const lines = [
      '## Jobs list and calendar (PostgreSQL)',
      '',
      `Two organizations in one database: ${fmt(SMALL)} and ${fmt(LARGE)} jobs, ${PER_DAY} a day (seeded in ${fmt(seedSeconds)} s with`,
      `INSERT … SELECT generate_series). autocannon, ${DURATION_S} s per case; lists with ${CONNECTIONS} connections, the calendar with one`,
      'client (the latency one user sees). Session auth, RLS and serialization included.',
      '',
      '| Jobs | Case | req/s | p50 ms | p99 ms | mean ms | errors |',
      '|---:|---|---:|---:|---:|---:|---:|',
      ...results.map(
        (r) =>
          `| ${fmt(r.n)} | ${r.label} | ${fmt(r.run.rps)} | ${fmt(r.run.p50, 1)} | ${fmt(r.run.p99, 1)} | ${fmt(r.run.mean, 1)} | ${r.run.errors} |`,
      ),
      '',
      `Latency at ${fmt(LARGE)} ÷ at ${fmt(SMALL)} (goal ≤ 1.3 for the pages; calendar goal p50 ≤ 60 ms at ${fmt(LARGE)}):`,
      '',
      '| Case | ratio of means | ratio of p50 |',
      '|---|---:|---:|',
    ];
    for (const s of results.filter((r) => r.n === SMALL)) {
      const l = results.find((r) => r.n === LARGE && r.label === s.label);
      if (l) {
        lines.push(
          `| ${s.label} | ${fmt(ratio(l.run.mean, s.run.mean), 2)} | ${fmt(ratio(l.run.p50, s.run.p50), 2)} |`,
        );
      }
    }
    return lines.join('\n');
  },
};
