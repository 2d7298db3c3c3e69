import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { retryDelay, startTasks, type WorkerTask } from '../../src/background/runner.js';
import { configSummary, loadConfig } from '../../src/config.js';
import { type Database, openDatabase } from '../../src/db/client.js';
import { watchDatabase } from '../../src/db/outage.js';
import { isDatabaseUnavailable } from '../../src/db/pg-errors.js';
import { TEST_ENV } from '../harness.js';

/**
 * Issue 30: a database that cannot be reached answers 503 SERVICE_UNAVAILABLE with
 * Retry-After on every route, authentication included (never 401/403/404/500), is
 * logged once per outage, and the worker backs off and resumes. The mapping is tested
 * here on either suite database: the app under test is given a PostgreSQL URL whose
 * server accepts TCP connections and closes them at once (the database "went away").
 * test/platform/outage-proxy.test.ts cuts a real PostgreSQL under a real server process.
 */

const driverError = (code: string, message = 'x') => Object.assign(new Error(message), { code });
/** Drizzle's wrapper: the SQL and its parameters in the message, the driver's error as cause. */
const drizzleWrapped = (cause: unknown, params = '') =>
  Object.assign(new Error(`Failed query: select 1\nparams: ${params}`), { cause });

describe('isDatabaseUnavailable (the one classification)', () => {
  it.each([
    ['connection refused', driverError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['connection reset', driverError('ECONNRESET')],
    [
      'refused on every address (AggregateError)',
      new AggregateError([driverError('ECONNREFUSED'), driverError('ECONNREFUSED')], ''),
    ],
    ['pool time-out', new Error('timeout exceeded when trying to connect')],
    ['connect time-out', new Error('Connection terminated due to connection timeout')],
    ['server closed the socket', new Error('Connection terminated unexpectedly')],
    ['admin shutdown 57P01', driverError('57P01')],
    ['cannot connect now 57P03', driverError('57P03')],
    ['too many connections 53300', driverError('53300')],
    ['connection failure 08006', driverError('08006')],
    ['unable to connect 08001', driverError('08001')],
    ['serialization failure 40001', driverError('40001')],
    ['deadlock 40P01', driverError('40P01')],
    ['wrapped by Drizzle', drizzleWrapped(driverError('57P01'))],
    [
      'wrapped by Better Auth (APIError with cause)',
      Object.assign(new Error('Failed to get session'), {
        status: 'INTERNAL_SERVER_ERROR',
        cause: drizzleWrapped(driverError('ECONNREFUSED')),
      }),
    ],
  ])('%s → unavailable', (_name, err) => {
    expect(isDatabaseUnavailable(err)).toBe(true);
  });

  it.each([
    ['unique violation', driverError('23505')],
    ['foreign key violation, wrapped', drizzleWrapped(driverError('23503'))],
    ['a parameter that reads like an outage', drizzleWrapped(driverError('23505'), 'Connection terminated')],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['an expired session (Better Auth 401)', Object.assign(new Error('Unauthorized'), { status: 'UNAUTHORIZED' })],
    ['nothing', undefined],
    ['a string', 'ECONNREFUSED'],
  ])('%s → not unavailable', (_name, err) => {
    expect(isDatabaseUnavailable(err)).toBe(false);
  });
});

/** A TCP server that accepts and closes every connection: PostgreSQL that went away mid-handshake. */
async function deadDatabase(): Promise<{ url: string; server: Server }> {
  const server = createServer((socket) => socket.destroy());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  return { url: `postgres://crm:crm@127.0.0.1:${address.port}/crm`, server };
}

describe('every route while the database is unreachable', () => {
  let app: FastifyInstance;
  let database: Database;
  let dead: Server;
  const logs = new PassThrough();
  let logText = '';
  logs.on('data', (d) => {
    logText += String(d);
  });

  beforeAll(async () => {
    const db = await deadDatabase();
    dead = db.server;
    database = await openDatabase({ databaseUrl: db.url, connectTimeoutMs: 1000 });
    const config = loadConfig({ ...TEST_ENV, DATABASE_URL: db.url, LOG_LEVEL: 'info' });
    app = await buildApp(config, database, { logStream: logs });
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
    dead?.close();
  });

  // Signed as Better Auth signs it, so the lookup reaches the database (a bad signature is a plain 401).
  const token = 'a'.repeat(32);
  const signature = createHmac('sha256', loadConfig(TEST_ENV).authSecret).update(token).digest('base64');
  const cookie = `better-auth.session_token=${encodeURIComponent(`${token}.${signature}`)}`;
  it.each([
    ['a session cookie', 'GET', '/api/customers', { cookie }],
    ['a session cookie, POST', 'POST', '/api/customers', { cookie, 'content-type': 'application/json' }],
    ['an API key', 'GET', '/api/customers', { authorization: `Bearer sk_${'a'.repeat(32)}` }],
    ['an API key in X-API-Key', 'GET', '/api/members', { 'x-api-key': `sk_${'b'.repeat(32)}` }],
    ['a device token', 'GET', '/api/customers', { authorization: `Bearer dev_${'c'.repeat(32)}` }],
    ['a session on an unknown path', 'GET', '/api/no-such-thing', { cookie }],
    ['get-session', 'GET', '/api/auth/get-session', { cookie }],
    ['sign-in', 'POST', '/api/auth/sign-in/email', { 'content-type': 'application/json' }],
    ['a portal link', 'GET', `/api/portal/pt_${'t'.repeat(43)}`, {}],
  ])('%s: 503 SERVICE_UNAVAILABLE with Retry-After', async (_name, method, url, headers) => {
    const res = await app.inject({
      method: method as 'GET' | 'POST',
      url,
      headers,
      ...(method === 'POST'
        ? {
            payload: url.includes('sign-in')
              ? { email: 'dana@example.com', password: 'correct horse battery' }
              : { firstName: 'Dana' },
          }
        : {}),
    });
    expect(res.statusCode, res.body).toBe(503);
    expect(res.headers['retry-after']).toBe('2');
    expect(res.json().error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', requestId: expect.any(String) });
    expect(res.body).not.toMatch(/ECONNRESET|Connection terminated|Failed query/);
  });

  it('still answers 401 to a request without credentials (that needs no database)', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/customers' });
    expect(res.statusCode).toBe(401);
  });

  it('/readyz answers 503, /healthz 200', async () => {
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ status: 'unavailable', checks: { database: 'unreachable' } });
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });

  it('logged the outage once, and no request as an unhandled error', () => {
    const lines = logText.split('\n').filter(Boolean);
    expect(lines.filter((l) => l.includes('database unreachable'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('unhandled error'))).toEqual([]);
  });
});

describe('DATABASE_CONNECT_TIMEOUT', () => {
  it('defaults to 5 s, takes a duration, and refuses nonsense', () => {
    expect(loadConfig({}).databaseConnectTimeoutMs).toBe(5_000);
    expect(loadConfig({ DATABASE_CONNECT_TIMEOUT: '1500ms' }).databaseConnectTimeoutMs).toBe(1_500);
    expect(configSummary(loadConfig({ DATABASE_CONNECT_TIMEOUT: '2s' })).databaseConnectTimeout).toBe('2s');
    expect(() => loadConfig({ DATABASE_CONNECT_TIMEOUT: 'soon' })).toThrow(/not a duration/);
    expect(() => loadConfig({ DATABASE_CONNECT_TIMEOUT: '10ms' })).toThrow(/DATABASE_CONNECT_TIMEOUT/);
  });

  it('bounds how long a query waits for a connection that never answers', async () => {
    // Accepts and stays silent: only the pool's time-out ends the wait.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const { port } = silent.address() as { port: number };
    const database = await openDatabase({ databaseUrl: `postgres://crm@127.0.0.1:${port}/crm`, connectTimeoutMs: 200 });
    try {
      const err = await database.pool?.query('SELECT 1').catch((e: unknown) => e);
      expect(isDatabaseUnavailable(err)).toBe(true);
    } finally {
      await database.close();
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });
});

describe('watchDatabase', () => {
  it('logs "unreachable" once and "back" once per outage, and tells listeners', async () => {
    let up = false;
    const fakeDb = {
      execute: async () => {
        if (!up) throw driverError('ECONNREFUSED');
        return { rows: [] };
      },
    };
    const lines: string[] = [];
    const log = {
      error: (_o: object, msg: string) => lines.push(msg),
      info: (_o: object, msg: string) => lines.push(msg),
    };
    const outage = watchDatabase({ db: fakeDb as unknown as Database['db'] }, log, { probeEveryMs: 10 });
    let backs = 0;
    outage.onBack(() => backs++);
    try {
      for (let i = 0; i < 50; i++) outage.report(driverError('ECONNREFUSED'));
      expect(outage.down).toBe(true);
      await new Promise((r) => setTimeout(r, 50)); // a few failed probes: still one line
      up = true;
      await vi.waitFor(() => expect(outage.down).toBe(false));
      expect(lines).toEqual([expect.stringMatching(/^database unreachable/), 'database back']);
      expect(backs).toBe(1);
      // A second outage is logged again.
      up = false;
      outage.report(driverError('57P01'));
      up = true;
      await vi.waitFor(() => expect(backs).toBe(2));
      expect(lines).toHaveLength(4);
    } finally {
      outage.close();
    }
  });
});

describe('the worker while the database is away', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('backs off from 0.5 s to at most 10 s, never sooner than the task interval', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelay(250, n))).toEqual([500, 1000, 2000, 4000, 8000, 10000, 10000]);
    expect(retryDelay(60_000, 3)).toBe(60_000);
  });

  it('retries a failing task with backoff, reports the outage instead of a warning per tick, resumes when back', async () => {
    vi.useFakeTimers();
    const calls: number[] = [];
    let failing = true;
    const task: WorkerTask = {
      name: 'probe-task',
      intervalMs: 100,
      run: async () => {
        calls.push(Date.now());
        if (failing) throw drizzleWrapped(driverError('ECONNREFUSED'));
        return 0;
      },
    };
    const warnings: string[] = [];
    const reports: unknown[] = [];
    const backListeners: Array<() => void> = [];
    const outage = {
      report: (err: unknown) => reports.push(err),
      down: true,
      onBack: (fn: () => void) => backListeners.push(fn),
      close: () => {},
    };
    const log = { warn: (_o: object, msg: string) => warnings.push(msg) } as never;
    const worker = startTasks([task], { config: loadConfig(TEST_ENV), database: {} as Database, log, outage });
    try {
      await vi.advanceTimersByTimeAsync(0);
      expect(calls).toHaveLength(1);
      // Failures 1, 2, 3 wait 0.5 s, 1 s, 2 s before the next attempt.
      await vi.advanceTimersByTimeAsync(499);
      expect(calls).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(calls).toHaveLength(2);
      await vi.advanceTimersByTimeAsync(999);
      expect(calls).toHaveLength(2);
      await vi.advanceTimersByTimeAsync(1);
      expect(calls).toHaveLength(3);
      expect(reports).toHaveLength(3);
      expect(warnings).toEqual([]);
      // The database is back: the worker runs at once instead of waiting out its 2 s backoff.
      failing = false;
      for (const fn of backListeners) fn();
      await vi.advanceTimersByTimeAsync(0);
      expect(calls).toHaveLength(4);
      // And polls at its own interval again.
      await vi.advanceTimersByTimeAsync(100);
      expect(calls).toHaveLength(5);
    } finally {
      await worker.stop();
    }
  });

  it('still warns on every failure that is not an outage', async () => {
    vi.useFakeTimers();
    const warnings: string[] = [];
    const reports: unknown[] = [];
    const task: WorkerTask = {
      name: 'buggy',
      intervalMs: 100,
      run: async () => {
        throw new TypeError('a bug');
      },
    };
    const outage = { report: (e: unknown) => reports.push(e), down: false, onBack: () => {}, close: () => {} };
    const log = { warn: (_o: object, msg: string) => warnings.push(msg) } as never;
    const worker = startTasks([task], { config: loadConfig(TEST_ENV), database: {} as Database, log, outage });
    try {
      await vi.advanceTimersByTimeAsync(1600);
      expect(warnings.length).toBe(3);
      expect(reports).toEqual([]);
    } finally {
      await worker.stop();
    }
  });
});
