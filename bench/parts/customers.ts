import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { type Database, openDatabase } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { customerListQuery } from '../../src/modules/customers/customers.service.js';
import { pageOf } from '../../src/platform/pagination.js';
import type { Ctx } from '../../src/platform/tenancy.js';
import { type BenchPart, createBenchDatabase, fmt, ratio } from '../lib.js';

const CUSTOMERS = 10_000;
const DURATION_S = 10;
const CONNECTIONS = 10;
/** Matches user123 and user1230..user1239: a realistic handful. */
const SEARCH = 'user123';

/** 10,000 customers in one organization, in the service's search-text format, then VACUUM ANALYZE. */
export function seedSql(organizationId: string): string[] {
  return [
    `INSERT INTO customers (id, organization_id, first_name, last_name, email, phone, billing_address, billing_city,
       billing_state, billing_zip, tags, search_text, created_at)
     SELECT 'cus_bench' || lpad(g::text, 6, '0'), '${organizationId}', 'First' || g, 'Last' || substr(md5(g::text), 1, 8),
       'user' || g || '@example.com', '555' || lpad(g::text, 7, '0'), g || ' Elm St', 'Springfield', 'IL', '62701',
       CASE WHEN g % 10 = 0 THEN ARRAY['weekly'] ELSE '{}'::text[] END,
       lower('First' || g || ' Last' || substr(md5(g::text), 1, 8)) || chr(31) || 'user' || g || '@example.com'
         || chr(31) || '555' || lpad(g::text, 7, '0'),
       now() - g * interval '1 minute'
     FROM generate_series(1, ${CUSTOMERS}) AS g`,
    'INSERT INTO customer_search (customer_id, search_text, tags) SELECT id, search_text, tags FROM customers',
    'VACUUM ANALYZE customers',
    'VACUUM ANALYZE customer_search',
  ];
}

interface Run {
  rps: number;
  p99: number;
  errors: number;
}

async function drive(url: string, headers: Record<string, string> = {}, seconds = DURATION_S): Promise<Run> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, headers });
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

/**
 * Baseline and service in alternating halves (5 s + 5 s each), so a change in
 * machine load during the run (other processes share these cores) weighs on both.
 */
async function compare(baselineUrl: string, serviceUrl: string, headers: Record<string, string>) {
  const halves = { baseline: [] as Run[], service: [] as Run[] };
  for (let i = 0; i < 2; i++) {
    halves.baseline.push(await drive(baselineUrl, {}, DURATION_S / 2));
    halves.service.push(await drive(serviceUrl, headers, DURATION_S / 2));
  }
  const merge = (runs: Run[]): Run => ({
    rps: runs.reduce((a, r) => a + r.rps, 0) / runs.length,
    p99: Math.max(...runs.map((r) => r.p99)),
    errors: runs.reduce((a, r) => a + r.errors, 0),
  });
  return { baseline: merge(halves.baseline), service: merge(halves.service) };
}

/** Signs up, creates an organization (which becomes active) and returns the session cookie and org id. */
async function signedInOwner(app: FastifyInstance): Promise<{ cookie: string; organizationId: string }> {
  const signUp = await app.inject({
    method: 'POST',
    url: '/api/auth/sign-up/email',
    payload: { name: 'Bench Owner', email: `bench-${Date.now()}@example.com`, password: 'correct horse battery' },
  });
  const raw = signUp.headers['set-cookie'];
  const cookie = (Array.isArray(raw) ? raw : [String(raw)]).map((c) => c.split(';')[0]).join('; ');
  const org = await app.inject({
    method: 'POST',
    url: '/api/organizations',
    headers: { cookie },
    payload: { name: 'Bench Lawn' },
  });
  if (org.statusCode !== 201) throw new Error(`bench setup failed: ${org.statusCode} ${org.body}`);
  return { cookie, organizationId: org.json().data.id };
}

async function startService(database: Database) {
  const config = loadConfig({
    NODE_ENV: 'production',
    AUTH_SECRET: 'bench-secret-0123456789abcdef0123456789abcdef',
    LOG_LEVEL: 'silent',
    RUN_WORKER: 'false',
    RATE_LIMIT_PER_MINUTE: '10000000',
    MAIL_OUTBOX_FILE: '/dev/null',
  });
  const app = await buildApp(config, database);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return { app, base: `http://127.0.0.1:${port}` };
}

/** The exact SQL the service sends for a list, so the baseline runs the same statement. */
function listStatement(database: Database, organizationId: string, search: string | undefined) {
  const ctx = {
    tx: database.db,
    organizationId,
    actor: { kind: 'user', id: 'bench', role: 'owner' },
  } as unknown as Ctx;
  return new PgDialect().sqlToQuery(customerListQuery(ctx, { search }, pageOf({ limit: 50 })));
}

/** Plain node:http + pg Pool: the same SELECT and JSON, no framework, no auth, no RLS, no transaction. */
async function startBaseline(url: string, statements: Record<string, { sql: string; params: unknown[] }>) {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const server: Server = createServer((req, res) => {
    const statement = statements[req.url ?? ''];
    if (!statement) {
      res.writeHead(404).end();
      return;
    }
    pool.query(statement.sql, statement.params).then(
      (result) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data: result.rows }));
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

const row = (label: string, r: Run, baseline?: Run) =>
  `| ${label} | ${fmt(r.rps)} | ${fmt(r.p99, 1)} | ${baseline ? fmt(ratio(r.rps, baseline.rps), 2) : '—'} | ${r.errors} |`;

async function onPostgres(lines: string[]) {
  const bench = await createBenchDatabase('customers');
  const database = await openDatabase({ databaseUrl: bench.url });
  try {
    const { app, base } = await startService(database);
    const { cookie, organizationId } = await signedInOwner(app);
    const admin = new pg.Client({ connectionString: bench.url });
    await admin.connect();
    for (const statement of seedSql(organizationId)) await admin.query(statement);
    await admin.end();

    const check = await fetch(`${base}/api/customers?limit=50&search=${SEARCH}`, { headers: { cookie } });
    const total = check.headers.get('x-total-count');
    if (check.status !== 200 || total !== '11') throw new Error(`search check failed: ${check.status} ${total}`);

    const baseline = await startBaseline(bench.url, {
      '/list': listStatement(database, organizationId, undefined),
      '/search': listStatement(database, organizationId, SEARCH),
    });
    try {
      const { baseline: listBase, service: list } = await compare(
        `${baseline.base}/list`,
        `${base}/api/customers?limit=50`,
        { cookie },
      );
      const { baseline: searchBase, service: search } = await compare(
        `${baseline.base}/search`,
        `${base}/api/customers?limit=50&search=${SEARCH}`,
        { cookie },
      );
      lines.push(
        row('PostgreSQL, service: GET /api/customers?limit=50', list, listBase),
        row('PostgreSQL, baseline: same SELECT, node:http + pg', listBase),
        row(`PostgreSQL, service: GET /api/customers?limit=50&search=${SEARCH}`, search, searchBase),
        row('PostgreSQL, baseline: same search SELECT, node:http + pg', searchBase),
      );
    } finally {
      await baseline.close();
      await app.close();
    }
  } finally {
    await database.close();
    await bench.drop();
  }
}

async function onPglite(lines: string[]) {
  const database = await openDatabase({ dataDir: 'memory://' });
  try {
    await migrate(database);
    const { app, base } = await startService(database);
    const { cookie, organizationId } = await signedInOwner(app);
    for (const statement of seedSql(organizationId)) await database.pglite?.exec(statement);
    try {
      const list = await drive(`${base}/api/customers?limit=50`, { cookie });
      lines.push(row('PGlite, service: GET /api/customers?limit=50', list));
    } finally {
      await app.close();
    }
  } finally {
    await database.close();
  }
}

export const customersBench: BenchPart = {
  name: 'customers',
  async run() {
    const lines = [
      '## Customers list and search',
      '',
      `${fmt(CUSTOMERS)} customers in one organization; autocannon, ${CONNECTIONS} connections, ${DURATION_S} s per row (two alternating halves`,
      'of service and baseline, p99 = the worse half);',
      'the service runs with session-cookie auth, RLS (one transaction per request as the app role), validation and',
      'response serialization; the baseline is plain node:http + a pg Pool sending the same SELECT (page of 50 plus',
      'its count) with no framework, no auth, no RLS and no transaction.',
      '',
      '| Case | req/s | p99 ms | service / baseline | errors |',
      '|---|---:|---:|---:|---:|',
    ];
    await onPostgres(lines);
    await onPglite(lines);
    return lines.join('\n');
  },
};
