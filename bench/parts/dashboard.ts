import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDatabase } from '../../src/db/client.js';
import { runNextExport } from '../../src/modules/exports/exports.tasks.js';
import { drive, type Run, signedInOwner, startService } from '../http.js';
import { type BenchPart, createBenchDatabase, fmt, ratio } from '../lib.js';

const INVOICES = 100_000;
const JOBS = 200_000;
const PAYMENTS = 60_000;
const DURATION_S = 5;

/**
 * Two years of a busy organization ending today: invoices and jobs spread evenly over
 * 730 days with every status, payments on a share of the invoices. All by
 * INSERT … SELECT generate_series (seconds, not hours of HTTP).
 */
function seedSql(org: string, customer: string): string[] {
  return [
    `INSERT INTO invoices (id, organization_id, invoice_number, customer_id, status, invoice_date, due_date,
       tax_rate, subtotal_cents, tax_cents, total_cents, amount_paid_cents)
     SELECT 'inv_b' || g, '${org}', 'INV-' || lpad(g::text, 7, '0'), '${customer}',
            (ARRAY['draft','sent','partially_paid','paid','overdue','void','written_off','paid'])[1 + g % 8],
            CURRENT_DATE - (g % 730), CURRENT_DATE - (g % 730) + 30,
            0, 10000 + g % 5000, 0, 10000 + g % 5000, CASE WHEN g % 8 = 2 THEN 2500 WHEN g % 8 IN (3, 7) THEN 10000 + g % 5000 ELSE 0 END
     FROM generate_series(1, ${INVOICES}) g`,
    `INSERT INTO jobs (id, organization_id, customer_id, status, scheduled_date, services, completed_at)
     SELECT 'job_b' || g, '${org}', '${customer}',
            (ARRAY['draft','scheduled','in_progress','on_hold','completed','canceled'])[1 + g % 6],
            CURRENT_DATE - 700 + (g % 730), ARRAY['Mowing'],
            CASE WHEN g % 6 = 4 THEN (CURRENT_DATE - 700 + (g % 730))::timestamptz + interval '15 hours' END
     FROM generate_series(1, ${JOBS}) g`,
    `INSERT INTO payments (id, organization_id, invoice_id, amount_cents, payment_date, method)
     SELECT 'pay_b' || g, '${org}', 'inv_b' || (g * 8 / 5)::int, 2500, CURRENT_DATE - ((g * 8 / 5)::int % 730), 'card'
     FROM generate_series(1, ${PAYMENTS}) g`,
  ];
}

export const dashboardBench: BenchPart = {
  name: 'dashboard',
  async run() {
    const bench = await createBenchDatabase('dashboard');
    const database = await openDatabase({ databaseUrl: bench.url });
    const dir = mkdtempSync(join(tmpdir(), 'crm-bench-exports-'));
    const runs: Array<{ label: string; run: Run }> = [];
    let seedSeconds = 0;
    let exportLine = '';
    try {
      const { app, base } = await startService(database);
      try {
        const empty = await signedInOwner(app, 'Empty');
        const busy = await signedInOwner(app, 'Busy');
        const customer = await app.inject({
          method: 'POST',
          url: '/api/customers',
          headers: { cookie: busy.cookie },
          payload: { firstName: 'Bench' },
        });
        const admin = new pg.Client({ connectionString: bench.url });
        await admin.connect();
        try {
          const started = Date.now();
          for (const q of seedSql(busy.organizationId, customer.json().data.id)) await admin.query(q);
          seedSeconds = (Date.now() - started) / 1000;
          await admin.query('VACUUM ANALYZE');
        } finally {
          await admin.end();
        }
        for (const [label, org] of [
          ['empty organization (baseline)', empty],
          [`${fmt(INVOICES)} invoices, ${fmt(JOBS)} jobs`, busy],
        ] as const) {
          for (const path of ['/api/dashboard', '/api/dashboard/revenue']) {
            const check = await fetch(`${base}${path}`, { headers: { cookie: org.cookie } });
            if (check.status !== 200) throw new Error(`check failed: ${path} ${check.status}`);
            runs.push({
              label: `${path}, ${label}`,
              run: await drive(`${base}${path}`, { cookie: org.cookie }, DURATION_S, 1),
            });
          }
        }
        // The export's throughput: the worker's function, as the worker runs it, on jobs and invoices.
        const queued = await app.inject({
          method: 'POST',
          url: '/api/exports',
          headers: { cookie: busy.cookie },
          payload: { format: 'ndjson', resources: ['invoices', 'jobs'] },
        });
        if (queued.statusCode !== 202) throw new Error(`export failed: ${queued.statusCode} ${queued.body}`);
        const started = Date.now();
        await runNextExport(database, dir);
        const seconds = (Date.now() - started) / 1000;
        const rows = INVOICES + JOBS;
        exportLine = `Export (ndjson, invoices + jobs, ${fmt(rows)} rows through the list functions, pages of 500): ${fmt(seconds, 1)} s, **${fmt(rows / seconds)} rows/s**.`;
      } finally {
        await app.close();
      }
    } finally {
      await database.close();
      await bench.drop();
      rmSync(dir, { recursive: true, force: true });
    }
    const find = (prefix: string, empty: boolean) =>
      runs.find((r) => r.label.startsWith(prefix) && r.label.includes('baseline') === empty)?.run;
    const lines = [
      '## Dashboard and export (PostgreSQL)',
      '',
      `One organization with ${fmt(INVOICES)} invoices, ${fmt(JOBS)} jobs and ${fmt(PAYMENTS)} payments over two years (seeded in ${fmt(seedSeconds)} s`,
      `with INSERT … SELECT generate_series), and an empty one as the baseline. autocannon, ${DURATION_S} s per case, one client`,
      '(the latency one user sees). Session auth, RLS and serialization included. Goal: dashboard p50 < 150 ms.',
      '',
      '| Case | req/s | p50 ms | p99 ms | mean ms | errors |',
      '|---|---:|---:|---:|---:|---:|',
      ...runs.map(
        (r) =>
          `| ${r.label} | ${fmt(r.run.rps)} | ${fmt(r.run.p50, 1)} | ${fmt(r.run.p99, 1)} | ${fmt(r.run.mean, 1)} | ${r.run.errors} |`,
      ),
      '',
      '| Route | p50 populated ÷ p50 empty |',
      '|---|---:|',
    ];
    for (const path of ['/api/dashboard,', '/api/dashboard/revenue,']) {
      const e = find(path, true);
      const b = find(path, false);
      if (e && b) lines.push(`| ${path.slice(0, -1)} | ${fmt(ratio(b.p50, e.p50), 2)} |`);
    }
    lines.push('', exportLine);
    return lines.join('\n');
  },
};
