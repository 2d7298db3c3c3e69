import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { type BenchPart, createBenchDatabase, fmt } from '../lib.js';
import { seedSql as seedCustomers } from './customers.js';

/*
 * Crew tracking at volume (issue 13): 1,000,000 GPS points of 30 members in one
 * organization (30 members × a point every 30 s ≈ a month), then a phone's
 * 500-point batch (POST, through a device token) and the office's "where is
 * everyone" (GET /locations/latest), next to the customers list of the same run.
 * CREW_BENCH_POINTS and CREW_BENCH_SECONDS shrink it for a quick check.
 */
const POINTS = Number(process.env.CREW_BENCH_POINTS ?? 1_000_000);
const DURATION_S = Number(process.env.CREW_BENCH_SECONDS ?? 10);
const MEMBERS = 30;
const CONNECTIONS = 10;
const BATCH = 500;

interface Run {
  rps: number;
  p99: number;
  errors: number;
}

function seedSql(organizationId: string): string[] {
  return [
    `INSERT INTO users (id, name, email) SELECT 'usr_bench' || m, 'Crew ' || m, 'crew' || m || '@bench.example'
       FROM generate_series(1, ${MEMBERS}) AS m`,
    `INSERT INTO members (id, organization_id, user_id, role) SELECT 'mem_bench' || m, '${organizationId}', 'usr_bench' || m, 'member'
       FROM generate_series(1, ${MEMBERS}) AS m`,
    // Point g belongs to member g % 30 + 1, one every 30 s per member, going back from now.
    `INSERT INTO crew_locations (organization_id, member_id, recorded_at, lat, lng, accuracy)
       SELECT '${organizationId}', 'mem_bench' || (g % ${MEMBERS} + 1), now() - (g / ${MEMBERS}) * interval '30 seconds',
         41.8 + (g % 1000) / 10000.0, -87.6 - (g % 700) / 10000.0, 5
       FROM generate_series(0, ${POINTS - 1}) AS g`,
    `INSERT INTO crew_latest_locations (organization_id, member_id, user_id, recorded_at, lat, lng, accuracy)
       SELECT DISTINCT ON (l.member_id) l.organization_id, l.member_id, m.user_id, l.recorded_at, l.lat, l.lng, l.accuracy
       FROM crew_locations l JOIN members m ON m.id = l.member_id
       WHERE l.organization_id = '${organizationId}' ORDER BY l.member_id, l.recorded_at DESC`,
    'VACUUM ANALYZE crew_locations',
    'VACUUM ANALYZE crew_latest_locations',
  ];
}

async function signedInOwner(app: FastifyInstance) {
  const signUp = await app.inject({
    method: 'POST',
    url: '/api/auth/sign-up/email',
    payload: { name: 'Bench Owner', email: `crew-bench-${Date.now()}@example.com`, password: 'correct horse battery' },
  });
  const raw = signUp.headers['set-cookie'];
  const cookie = (Array.isArray(raw) ? raw : [String(raw)]).map((c) => c.split(';')[0]).join('; ');
  const org = await app.inject({
    method: 'POST',
    url: '/api/organizations',
    headers: { cookie },
    payload: { name: 'Crew' },
  });
  if (org.statusCode !== 201) throw new Error(`bench setup failed: ${org.statusCode} ${org.body}`);
  const device = await app.inject({
    method: 'POST',
    url: '/api/crew-tracking/devices',
    headers: { cookie },
    payload: { name: 'Bench phone' },
  });
  if (device.statusCode !== 201) throw new Error(`device failed: ${device.statusCode} ${device.body}`);
  return { cookie, organizationId: org.json().data.id as string, token: device.json().data.token as string };
}

const summary = (r: autocannon.Result): Run => ({
  rps: r.requests.average,
  p99: r.latency.p99,
  errors: r.errors + r.timeouts + r.non2xx,
});

async function get(url: string, headers: Record<string, string>) {
  return summary(await autocannon({ url, connections: CONNECTIONS, duration: DURATION_S, headers }));
}

/** Every request is a new 500-point batch with its own timestamps (a replayed batch would be skipped, and cheap). */
async function postBatches(base: string, token: string) {
  let request = 0;
  const start = Date.now() - 60 * 86_400_000;
  const body = () => {
    const first = start + request++ * BATCH * 1000;
    return JSON.stringify({
      points: Array.from({ length: BATCH }, (_, i) => ({
        lat: 41.88 + i / 100_000,
        lng: -87.63 - i / 100_000,
        accuracy: 8,
        recordedAt: new Date(first + i * 1000).toISOString(),
      })),
    });
  };
  const result = await autocannon({
    url: `${base}/api/crew-tracking/locations`,
    connections: CONNECTIONS,
    duration: DURATION_S,
    requests: [
      {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        setupRequest: (req) => ({ ...req, body: body() }),
      },
    ],
  });
  return summary(result);
}

const row = (label: string, r: Run) => `| ${label} | ${fmt(r.rps)} | ${fmt(r.p99, 1)} | ${r.errors} |`;

export const crewTrackingBench: BenchPart = {
  name: 'crew-tracking',
  async run() {
    const lines = [
      '## Crew tracking: GPS points at volume',
      '',
      `${fmt(POINTS)} location points of ${MEMBERS} members in one organization (PostgreSQL), plus 10,000 customers;`,
      `autocannon, ${CONNECTIONS} connections, ${DURATION_S} s per row. POST sends a new ${BATCH}-point batch per request`,
      'through a device token; latest is one row per member; the customers list is the same run, same service.',
      '',
      '| Case | req/s | p99 ms | errors |',
      '|---|---:|---:|---:|',
    ];
    const bench = await createBenchDatabase('crew');
    const database = await openDatabase({ databaseUrl: bench.url });
    const config = loadConfig({
      NODE_ENV: 'production',
      AUTH_SECRET: 'bench-secret-0123456789abcdef0123456789abcdef',
      LOG_LEVEL: 'silent',
      RUN_WORKER: 'false',
      RATE_LIMIT_PER_MINUTE: '10000000',
      MAIL_OUTBOX_FILE: '/dev/null',
    });
    const app = await buildApp(config, database);
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      const { cookie, organizationId, token } = await signedInOwner(app);
      const admin = new pg.Client({ connectionString: bench.url });
      await admin.connect();
      const seeded = Date.now();
      for (const statement of [...seedSql(organizationId), ...seedCustomers(organizationId, 10_000)])
        await admin.query(statement);
      await admin.end();
      lines.splice(6, 0, `Seeding took ${fmt((Date.now() - seeded) / 1000, 1)} s.`, '');

      const check = await fetch(`${base}/api/crew-tracking/locations/latest`, { headers: { cookie } });
      const latest = ((await check.json()) as { data: unknown[] }).data.length;
      if (check.status !== 200 || latest !== MEMBERS) throw new Error(`latest check failed: ${check.status} ${latest}`);

      lines.push(
        row(`POST /api/crew-tracking/locations (${BATCH} points, device token)`, await postBatches(base, token)),
      );
      lines.push(
        row(
          `GET /api/crew-tracking/locations/latest (${MEMBERS} members)`,
          await get(`${base}/api/crew-tracking/locations/latest`, { cookie }),
        ),
      );
      lines.push(
        row('GET /api/customers?limit=50 (same run)', await get(`${base}/api/customers?limit=50`, { cookie })),
      );
    } finally {
      await app.close();
      await database.close();
      await bench.drop();
    }
    return lines.join('\n');
  },
};
