import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { openDatabase } from '../../src/db/client.js';
import { signedInOwner, startService } from '../http.js';
import { type BenchPart, createBenchDatabase, fmt, ratio } from '../lib.js';

/*
 * Journal export (issue 46): 100,000 ledger lines (50,000 two-line entries over a year) in
 * each format through the HTTP route, beside `COPY … TO STDOUT` of the same rows run by psql in
 * the same run (the floor any export of these rows has: the ratio asked is ≥ 0.3). Memory: the
 * process's peak heap above its level before the export, sampled while the body streams, at
 * 100,000 lines and at 10,000: flat means the larger export does not hold more; and the live heap
 * itself at the start, the middle and the end of the 100,000-line download (flat: the same three).
 */
const ENTRIES = 50_000;
const FORMATS = ['json', 'csv', 'iif', 'qbo', 'xero'] as const;

function seedSql(org: string, entries: number, prefix: string): string[] {
  return [
    `INSERT INTO ledger_entries (id, organization_id, entry_date, source_type, source_id, memo)
     SELECT 'jen_${prefix}' || lpad(g::text, 7, '0'), '${org}', DATE '2025-01-01' + (g % 365), 'payment', 'pay_' || g, 'Payment on invoice INV-' || g
     FROM generate_series(1, ${entries}) g`,
    `INSERT INTO ledger_lines (id, organization_id, entry_id, position, account_code, debit_cents, credit_cents)
     SELECT 'jln_${prefix}' || lpad(g::text, 7, '0') || p, '${org}', 'jen_${prefix}' || lpad(g::text, 7, '0'), p,
            CASE WHEN p = 0 THEN '1000' ELSE '1100' END,
            CASE WHEN p = 0 THEN 1000 + g % 9000 ELSE 0 END, CASE WHEN p = 1 THEN 1000 + g % 9000 ELSE 0 END
     FROM generate_series(1, ${entries}) g, generate_series(0, 1) p`,
  ];
}

/**
 * Streams the body, counting bytes; returns seconds, bytes and the heap's rise. `live`: the heap
 * is read right after a full collection every 64 chunks (what the export holds, not garbage
 * waiting for the collector), which needs node --expose-gc and is then timed separately.
 */
async function download(url: string, cookie: string, live = false) {
  const gc = live ? global.gc : undefined;
  gc?.();
  const before = process.memoryUsage().heapUsed;
  let peak = before;
  const t = performance.now();
  const res = await fetch(url, { headers: { cookie } });
  if (res.status !== 200 || !res.body) throw new Error(`journal export answered ${res.status}`);
  let bytes = 0;
  let chunks = 0;
  const samples: number[] = [];
  for await (const chunk of res.body) {
    bytes += (chunk as Uint8Array).byteLength;
    if (++chunks % 64 === 0) {
      gc?.();
      const used = process.memoryUsage().heapUsed;
      samples.push(used);
      peak = Math.max(peak, used);
    }
  }
  const mb = (n: number) => n / 1024 / 1024;
  return {
    seconds: (performance.now() - t) / 1000,
    bytes,
    peakMb: mb(peak - before),
    // The live heap at the start (before the request), half way through the body, and at its end.
    heapMb: [mb(before), mb(samples[Math.floor(samples.length / 2)] ?? before), mb(samples.at(-1) ?? before)],
  };
}

export const ledgerJournalBench: BenchPart = {
  name: 'ledger-journal',
  async run() {
    const bench = await createBenchDatabase('journal');
    const database = await openDatabase({ databaseUrl: bench.url });
    const rows: string[] = [];
    try {
      const { app, base } = await startService(database);
      try {
        const big = await signedInOwner(app, 'Big books');
        const small = await signedInOwner(app, 'Small books');
        const seeder = new pg.Client({ connectionString: bench.url });
        await seeder.connect();
        try {
          for (const s of seedSql(big.organizationId, ENTRIES, 'b')) await seeder.query(s);
          for (const s of seedSql(small.organizationId, ENTRIES / 10, 's')) await seeder.query(s);
          await seeder.query('VACUUM ANALYZE');
        } finally {
          await seeder.end();
        }
        const copySql = `COPY (SELECT e.entry_date, e.id, e.source_type, e.source_id, l.account_code, l.debit_cents, l.credit_cents, e.memo
          FROM ledger_entries e JOIN ledger_lines l ON l.organization_id = e.organization_id AND l.entry_id = e.id
          WHERE e.organization_id = '${big.organizationId}' ORDER BY e.entry_date, e.id, l.position) TO STDOUT WITH CSV`;
        const copy = () => {
          const t = performance.now();
          const out = spawnSync('psql', [bench.url, '-X', '-q', '-c', copySql], { maxBuffer: 1 << 30 });
          if (out.status !== 0) throw new Error(`psql COPY failed: ${out.stderr}`);
          return { seconds: (performance.now() - t) / 1000, bytes: out.stdout.length };
        };
        copy(); // warm the cache once, as the exports below warm it for each other
        const baseline = copy();
        const lines = ENTRIES * 2;
        const range = 'from=2025-01-01&to=2025-12-31';
        const live = typeof global.gc === 'function';
        for (const format of FORMATS) {
          const url = `${base}/api/ledger/journal?${range}&format=${format}`;
          await download(url, big.cookie); // warm
          const run = await download(url, big.cookie);
          const bigLive = await download(url, big.cookie, true);
          const smallLive = await download(url, small.cookie, true);
          const rate = lines / run.seconds;
          rows.push(
            `| ${format} | ${fmt(rate)} | ${fmt(ratio(rate, lines / baseline.seconds), 2)} | ${fmt(run.bytes / 1e6, 1)} | ${live ? `${fmt(bigLive.peakMb, 1)} | ${fmt(smallLive.peakMb, 1)} | ${bigLive.heapMb.map((m) => fmt(m, 1)).join(' / ')}` : 'n/a | n/a | n/a'} |`,
          );
        }
        rows.push(
          `| baseline: psql COPY … TO STDOUT (CSV) | ${fmt(lines / baseline.seconds)} | 1.00 | ${fmt(baseline.bytes / 1e6, 1)} | | | |`,
        );
      } finally {
        await app.close();
      }
    } finally {
      await database.close();
      await bench.drop();
    }
    return [
      '## Ledger: journal export',
      '',
      `${fmt(ENTRIES * 2)} ledger lines (${fmt(ENTRIES)} entries) through \`GET /api/ledger/journal\` over HTTP, each format after one warm-up; the ratio asked is ≥ 0.3 of COPY (issue 46). Live heap rise: the peak heapUsed after a full collection every 64 chunks, above the level before the download, at 100,000 lines and at 10,000 (flat: about the same; each part runs with \`--expose-gc\`, bench/run.ts), and the live heap at the start, middle and end of the 100,000-line download (flat: the same three).`,
      '',
      '| format | lines/s | × COPY | MB | live heap rise MB (100k lines) | live heap rise MB (10k lines) | live heap MB start / middle / end (100k lines) |',
      '|---|---:|---:|---:|---:|---:|---:|',
      ...rows,
    ].join('\n');
  },
};
