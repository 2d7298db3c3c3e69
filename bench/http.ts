import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import type { Database } from '../src/db/client.js';

/** What one autocannon run measured (latencies in ms). */
export interface Run {
  rps: number;
  p50: number;
  p99: number;
  mean: number;
  errors: number;
  /** Responses timed: the latencies the percentiles are taken from (a p99 of 300 is its 3 slowest). */
  samples: number;
}

export async function drive(
  url: string,
  headers: Record<string, string>,
  seconds: number,
  connections: number,
): Promise<Run> {
  const result = await autocannon({ url, connections, duration: seconds, headers });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    mean: result.latency.average,
    errors: result.errors + result.timeouts + result.non2xx,
    samples: result.requests.total,
  };
}

/** Several runs as one: mean throughput and latency, the worst p99. */
export function merge(runs: Run[]): Run {
  const avg = (f: (r: Run) => number) => runs.reduce((a, r) => a + f(r), 0) / runs.length;
  return {
    rps: avg((r) => r.rps),
    p50: avg((r) => r.p50),
    mean: avg((r) => r.mean),
    p99: Math.max(...runs.map((r) => r.p99)),
    errors: runs.reduce((a, r) => a + r.errors, 0),
    samples: runs.reduce((a, r) => a + r.samples, 0),
  };
}

/** The service as deployed: production config, session auth, RLS, no worker. */
export async function startService(database: Database, env: Record<string, string> = {}) {
  const config = loadConfig({
    NODE_ENV: 'production',
    AUTH_SECRET: 'bench-secret-0123456789abcdef0123456789abcdef',
    LOG_LEVEL: 'silent',
    RUN_WORKER: 'false',
    RATE_LIMIT_PER_MINUTE: '10000000',
    MAIL_OUTBOX_FILE: '/dev/null',
    ...env,
  });
  const app = await buildApp(config, database);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return { app, base: `http://127.0.0.1:${port}` };
}

/** Signs up, creates an organization (which becomes active) and returns the session cookie and org id. */
export async function signedInOwner(
  app: FastifyInstance,
  name = 'Bench Lawn',
): Promise<{ cookie: string; organizationId: string }> {
  const signUp = await app.inject({
    method: 'POST',
    url: '/api/auth/sign-up/email',
    payload: {
      name: 'Bench Owner',
      email: `bench-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`,
      password: 'correct horse battery',
    },
  });
  const raw = signUp.headers['set-cookie'];
  const cookie = (Array.isArray(raw) ? raw : [String(raw)]).map((c) => c.split(';')[0]).join('; ');
  const org = await app.inject({ method: 'POST', url: '/api/organizations', headers: { cookie }, payload: { name } });
  if (org.statusCode !== 201) throw new Error(`bench setup failed: ${org.statusCode} ${org.body}`);
  return { cookie, organizationId: org.json().data.id };
}
