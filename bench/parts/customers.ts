import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PgDialect } from 'drizzle-orm/pg-core';
import pg from 'pg';
import type { Database } from '../../src/db/client.js';
import { openDatabase } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { type CustomerFilter, customerListQuery } from '../../src/modules/customers/customers.service.js';
import { type PageQueryInput, pageOf } from '../../src/platform/pagination.js';
import type { Ctx } from '../../src/platform/tenancy.js';
import { drive, merge, type Run, signedInOwner, startService } from '../http.js';
import { type BenchPart, createBenchDatabase, fmt, ratio } from '../lib.js';

const SIZES = [10_000, 100_000];
/** Seconds per case and side, in two alternating halves. */
const DURATION_S = 10;
const CONNECTIONS = 10;
/** One customer by email fragment: the same result at every size, so the sizes compare. */
const SEARCH = 'user4321@';

const customerId = (g: number) => `cus_bench${String(g).padStart(6, '0')}`;

/** `n` customers in one organization, in the service's search-text format, newest = g 1, then VACUUM ANALYZE. */
export function seedSql(organizationId: string, n: number): string[] {
  return [
    `INSERT INTO customers (id, organization_id, first_name, last_name, email, phone, billing_address, billing_city,
       billing_state, billing_zip, tags, search_text, created_at)
     SELECT 'cus_bench' || lpad(g::text, 6, '0'), '${organizationId}', 'First' || g, 'Last' || substr(md5(g::text), 1, 8),
       'user' || g || '@example.com', '555' || lpad(g::text, 7, '0'), g || ' Elm St', 'Springfield', 'IL', '62701',
       CASE WHEN g % 10 = 0 THEN ARRAY['weekly'] ELSE '{}'::text[] END,
       lower('First' || g || ' Last' || substr(md5(g::text), 1, 8)) || chr(31) || 'user' || g || '@example.com'
         || chr(31) || '555' || lpad(g::text, 7, '0'),
       now() - g * interval '1 second'
     FROM generate_series(1, ${n}) AS g`,
    'INSERT INTO customer_search (customer_id, organization_id, search_text, tags) SELECT id, organization_id, search_text, tags FROM customers',
    'VACUUM ANALYZE customers',
    'VACUUM ANALYZE customer_search',
  ];
}

interface Case {
  label: string;
  query: string;
  filter: CustomerFilter;
  page: PageQueryInput;
}

/** First page, a cursor page at 90 % of the list (row 90,000 of 100,000), and a search. */
function casesFor(n: number): Case[] {
  const deep = customerId(Math.round(n * 0.9));
  return [
    { label: 'first page', query: 'limit=50', filter: {}, page: { limit: 50 } },
    {
      label: `cursor page at row ${fmt(n * 0.9)}`,
      query: `limit=50&startingAfter=${deep}`,
      filter: {},
      page: { limit: 50, startingAfter: deep },
    },
    { label: `search ${SEARCH}`, query: `limit=50&search=${SEARCH}`, filter: { search: SEARCH }, page: { limit: 50 } },
  ];
}

/** Seconds of untimed load on each side before a case's timed halves. */
const WARM_UP_S = 2;

/**
 * Baseline and service in alternating halves, baseline–service then service–baseline, so a
 * change in machine load during the run (other processes share these cores) weighs on both,
 * and neither side always runs right after the other. Both sides first get the same untimed
 * warm-up: autocannon, the driver and the servers share this process, and the first timed half
 * of the run used to be the baseline's, cold (JIT, pools, sockets), so the first case's baseline
 * read low (10,000 first page: 1,001 req/s against 1,207 for the same page at 100,000 in the
 * same run) and flattered the service's ratio there.
 */
async function compare(baselineUrl: string, serviceUrl: string, headers: Record<string, string>) {
  await drive(baselineUrl, {}, WARM_UP_S, CONNECTIONS);
  await drive(serviceUrl, headers, WARM_UP_S, CONNECTIONS);
  const halves = { baseline: [] as Run[], service: [] as Run[] };
  for (let i = 0; i < 2; i++) {
    const baselineFirst = i === 0;
    if (baselineFirst) halves.baseline.push(await drive(baselineUrl, {}, DURATION_S / 2, CONNECTIONS));
    halves.service.push(await drive(serviceUrl, headers, DURATION_S / 2, CONNECTIONS));
    if (!baselineFirst) halves.baseline.push(await drive(baselineUrl, {}, DURATION_S / 2, CONNECTIONS));
  }
  return { baseline: merge(halves.baseline), service: merge(halves.service) };
}

/** The exact SQL the service sends for a list page (limit + 1 rows, no count). */
function listStatement(database: Database, organizationId: string, c: Case) {
  const ctx = {
    tx: database.db,
    organizationId,
    actor: { kind: 'user', id: 'bench', role: 'owner' },
  } as unknown as Ctx;
  return new PgDialect().sqlToQuery(customerListQuery(ctx, c.filter, pageOf(c.page)));
}

/**
 * Plain node:http + pg Pool: the same SELECT and JSON, no framework, no auth, no RLS, no transaction.
 * The search goes through customer_search_matching(), which reads the tenant from the
 * `app.organization_id` setting; without it the function matches nothing (an empty answer
 * costs next to nothing, which made the search baseline ~4× too fast), so the baseline's
 * connections carry the setting for their whole session instead of per transaction.
 */
async function startBaseline(
  url: string,
  organizationId: string,
  statements: Record<string, { sql: string; params: unknown[] }>,
) {
  const pool = new pg.Pool({ connectionString: url, max: 10, options: `-c app.organization_id=${organizationId}` });
  const server: Server = createServer((req, res) => {
    const statement = statements[req.url ?? ''];
    if (!statement) {
      res.writeHead(404).end();
      return;
    }
    pool.query(statement.sql, statement.params).then(
      (result) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data: result.rows.slice(0, 50) }));
      },
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      await pool.end();
    },
  };
}

interface Measured {
  n: number;
  label: string;
  service: Run;
  baseline: Run;
  /** Per request, counted at the driver: the service's, then the baseline's. */
  driver: { service: DriverCount; baseline: DriverCount };
}

interface DriverCount {
  /** Calls of pg's Client.query: each sends its message(s) and waits for the answer, one round trip. */
  roundTrips: number;
  /** Statements answered (a message of several statements answers several results). */
  statements: number;
}

/**
 * Round trips and statements per request at the driver (pg's Client.query, under every pool of
 * this process: the tenant transaction, the session lookup, the baseline), over `requests`
 * requests sent one after another, so nothing else is counted.
 */
async function countAtDriver(url: string, headers: Record<string, string>, requests = 20): Promise<DriverCount> {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  let roundTrips = 0;
  let statements = 0;
  const count = (r: unknown) => {
    statements += Array.isArray(r) ? r.length : 1;
  };
  proto.query = function (this: unknown, ...args: unknown[]) {
    roundTrips++;
    // pg's Pool.query hands its client a callback; Drizzle and own code await the promise.
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = (err: unknown, r: unknown) => {
        count(err ? undefined : r);
        return callback(err, r);
      };
    }
    const sent = original.apply(this, args);
    if (sent instanceof Promise) sent.then(count, () => count(undefined));
    return sent;
  };
  try {
    for (let i = 0; i < requests; i++) {
      const res = await fetch(url, { headers });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`driver count: ${url} answered ${res.status}`);
    }
  } finally {
    proto.query = original;
  }
  return { roundTrips: roundTrips / requests, statements: statements / requests };
}

/** One organization of `n` customers on a fresh PostgreSQL database: every case, service and baseline. */
async function measureAt(n: number): Promise<Measured[]> {
  const bench = await createBenchDatabase(`customers${n}`);
  const database = await openDatabase({ databaseUrl: bench.url });
  const out: Measured[] = [];
  try {
    const { app, base } = await startService(database);
    const { cookie, organizationId } = await signedInOwner(app);
    const admin = new pg.Client({ connectionString: bench.url });
    await admin.connect();
    for (const statement of seedSql(organizationId, n)) await admin.query(statement);
    await admin.end();
    const cases = casesFor(n);

    // The cases answer what they should before they are timed.
    for (const c of cases) {
      const res = await fetch(`${base}/api/customers?${c.query}`, { headers: { cookie } });
      const body = (await res.json()) as { data: Array<{ id: string }> };
      const expected = c.filter.search ? 1 : 50;
      if (res.status !== 200 || body.data.length !== expected) {
        throw new Error(`check failed for ${c.label}: ${res.status}, ${body.data.length} rows`);
      }
    }

    const statements = Object.fromEntries(cases.map((c, i) => [`/${i}`, listStatement(database, organizationId, c)]));
    const baseline = await startBaseline(bench.url, organizationId, statements);
    try {
      // The baseline answers what the service does, so the two do the same work.
      for (const [i, c] of cases.entries()) {
        const body = (await (await fetch(`${baseline.base}/${i}`)).json()) as { data: unknown[] };
        const expected = c.filter.search ? 1 : 50;
        if (body.data.length !== expected) {
          throw new Error(`baseline check failed for ${c.label}: ${body.data.length} rows`);
        }
      }
      // Counted before any load run, whose last requests may still be finishing.
      const driver: Array<Measured['driver']> = [];
      for (const [i, c] of cases.entries()) {
        driver.push({
          service: await countAtDriver(`${base}/api/customers?${c.query}`, { cookie }),
          baseline: await countAtDriver(`${baseline.base}/${i}`, {}),
        });
      }
      for (const [i, c] of cases.entries()) {
        const r = await compare(`${baseline.base}/${i}`, `${base}/api/customers?${c.query}`, { cookie });
        out.push({
          n,
          label: c.label.replace(fmt(n * 0.9), '90 %'),
          ...r,
          driver: driver[i] as Measured['driver'],
        });
      }
    } finally {
      await baseline.close();
      await app.close();
    }
  } finally {
    await database.close();
    await bench.drop();
  }
  return out;
}

/**
 * The embedded database against PostgreSQL at the smaller size: the same service (session auth, RLS,
 * one tenant transaction per request) on each, first page and deep cursor page, in alternating
 * halves so that machine load weighs on both. PGlite runs inside the service's own process (one
 * core for the database and the API), PostgreSQL beside it.
 */
async function pgliteAgainstPostgres(n: number): Promise<string[]> {
  const bench = await createBenchDatabase(`customers_lite${n}`);
  const postgres = await openDatabase({ databaseUrl: bench.url });
  const lite = await openDatabase({ dataDir: 'memory://' });
  const lines: string[] = [];
  try {
    await migrate(lite);
    const onPostgres = await startService(postgres);
    const onLite = await startService(lite);
    try {
      const pgOwner = await signedInOwner(onPostgres.app);
      const liteOwner = await signedInOwner(onLite.app);
      const admin = new pg.Client({ connectionString: bench.url });
      await admin.connect();
      for (const statement of seedSql(pgOwner.organizationId, n)) await admin.query(statement);
      await admin.end();
      for (const statement of seedSql(liteOwner.organizationId, n)) await lite.pglite?.exec(statement);
      for (const c of casesFor(n).slice(0, 2)) {
        const urls = [`${onPostgres.base}/api/customers?${c.query}`, `${onLite.base}/api/customers?${c.query}`];
        for (const [i, url] of urls.entries()) {
          const res = await fetch(url, { headers: { cookie: i === 0 ? pgOwner.cookie : liteOwner.cookie } });
          const body = (await res.json()) as { data: unknown[] };
          if (res.status !== 200 || body.data.length !== 50) throw new Error(`check failed for ${c.label} (${i})`);
        }
        const halves = { postgres: [] as Run[], lite: [] as Run[] };
        for (let i = 0; i < 2; i++) {
          halves.postgres.push(await drive(urls[0] as string, { cookie: pgOwner.cookie }, DURATION_S / 2, CONNECTIONS));
          halves.lite.push(await drive(urls[1] as string, { cookie: liteOwner.cookie }, DURATION_S / 2, CONNECTIONS));
        }
        const r = { postgres: merge(halves.postgres), lite: merge(halves.lite) };
        lines.push(
          `| PGlite, ${fmt(n)}, ${c.label.replace(fmt(n * 0.9), '90 %')} | ${fmt(r.lite.rps)} | ${fmt(r.lite.p50, 1)} | ${fmt(r.lite.p99, 1)} | ${fmt(r.postgres.rps)} (service on PostgreSQL) | ${fmt(ratio(r.lite.rps, r.postgres.rps), 2)} (PGlite ÷ PostgreSQL, goal ≥ 0.5) | ${r.lite.errors} |`,
        );
      }
    } finally {
      await onLite.app.close();
      await onPostgres.app.close();
    }
  } finally {
    await lite.close();
    await postgres.close();
    await bench.drop();
  }
  return lines;
}

/** `CUSTOMERS_BENCH=pglite npm run bench -- customers`: only the PGlite ÷ PostgreSQL rows (about a minute). */
const PGLITE_ONLY = process.env.CUSTOMERS_BENCH === 'pglite';

export const customersBench: BenchPart = {
  name: 'customers',
  async run() {
    const [small, large] = SIZES as [number, number];
    if (PGLITE_ONLY) {
      return [
        '## Customers list on PGlite against PostgreSQL (CUSTOMERS_BENCH=pglite: these rows only)',
        '',
        `The same service on each database, ${fmt(small)} customers, ${CONNECTIONS} connections, ${DURATION_S} s per case and side.`,
        '',
        '| Case | req/s | p50 ms | p99 ms | PostgreSQL req/s | ratio | errors |',
        '|---|---:|---:|---:|---:|---:|---:|',
        ...(await pgliteAgainstPostgres(small)),
      ].join('\n');
    }
    const measured: Measured[] = [];
    for (const n of SIZES) measured.push(...(await measureAt(n)));
    const lines = [
      '## Customers list: first page, deep cursor page, search (PostgreSQL)',
      '',
      `${SIZES.map((n) => fmt(n)).join(' and ')} customers in one organization (a fresh database each); autocannon,`,
      `${CONNECTIONS} connections, ${DURATION_S} s per case and side in two alternating halves (baseline–service, then`,
      `service–baseline, after ${WARM_UP_S} s of untimed load on each; p99 = the worse half).`,
      'The service runs with session-cookie auth, RLS (one transaction per request as the app role), validation and',
      'response serialization; the baseline is plain node:http + a pg Pool sending the service’s own page query',
      '(`customerListQuery`: limit + 1 rows, no count) with no framework, no auth, no RLS and no transaction',
      '(its connections carry the tenant setting the search function reads, so it finds the same row).',
      '',
      '| Case | req/s | p50 ms | p99 ms | baseline req/s | service / baseline (goal ≥ 0.6) | errors |',
      '|---|---:|---:|---:|---:|---:|---:|',
      ...measured.map(
        (m) =>
          `| ${fmt(m.n)}, ${m.label} | ${fmt(m.service.rps)} | ${fmt(m.service.p50, 1)} | ${fmt(m.service.p99, 1)} | ${fmt(m.baseline.rps)} | ${fmt(ratio(m.service.rps, m.baseline.rps), 2)} | ${m.service.errors} |`,
      ),
      ...(await pgliteAgainstPostgres(small)),
      '',
      'At the driver, per request (pg `Client.query` calls = round trips, and the statements they carried;',
      '20 requests one after another, session lookup included):',
      '',
      '| Case | service round trips | service statements | baseline round trips | baseline statements |',
      '|---|---:|---:|---:|---:|',
      ...measured.map(
        (m) =>
          `| ${fmt(m.n)}, ${m.label} | ${fmt(m.driver.service.roundTrips, 2)} | ${fmt(m.driver.service.statements, 2)} | ${fmt(m.driver.baseline.roundTrips, 2)} | ${fmt(m.driver.baseline.statements, 2)} |`,
      ),
      '',
      `Latency at ${fmt(large)} ÷ latency at ${fmt(small)} (service; goal ≤ 1.3 for the first and cursor pages):`,
      '',
      '| Case | mean ms at 10k | mean ms at 100k | ratio of means | ratio of p50 | ratio of p99 |',
      '|---|---:|---:|---:|---:|---:|',
    ];
    for (const s of measured.filter((m) => m.n === small)) {
      const l = measured.find((m) => m.n === large && m.label === s.label);
      if (!l) continue;
      lines.push(
        `| ${s.label} | ${fmt(s.service.mean, 1)} | ${fmt(l.service.mean, 1)} | ${fmt(ratio(l.service.mean, s.service.mean), 2)} | ${fmt(ratio(l.service.p50, s.service.p50), 2)} | ${fmt(ratio(l.service.p99, s.service.p99), 2)} |`,
      );
    }
    return lines.join('\n');
  },
};
