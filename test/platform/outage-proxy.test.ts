import { once } from 'node:events';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Receiver, startReceiver } from '../webhooks/helpers.js';
import { processEnvironment, type Run, signUpWithOrganization, startServer, stop } from './processes.js';

const info = inject('database');

/** The server's DATABASE_CONNECT_TIMEOUT: the contract is that no request waits much longer. */
const CONNECT_TIMEOUT_MS = 2_000;
/** A request that takes longer than this counts as hung (a generous multiple of the contract). */
const HUNG_MS = 4 * CONNECT_TIMEOUT_MS;
const CLIENTS = 4;
/** Answers (any status) each phase waits for: counts, not clock time, drive the scenario. */
const ANSWERS_BEFORE_CUT = 40;
const ANSWERS_WHILE_CUT = 40;
const ANSWERS_AFTER_RESTORE = 40;

/**
 * A TCP proxy between the server and PostgreSQL that the test can cut. `cut('hold')`
 * drops every open connection and swallows new ones without a word (a network
 * partition: only the pool's connection time-out ends the wait); `cut('reset')` drops
 * them at once (PostgreSQL stopped); `restore()` forwards again.
 */
async function startProxy(target: { host: string; port: number }) {
  let mode: 'open' | 'hold' | 'reset' = 'open';
  const open = new Set<Socket>();
  const held = new Set<Socket>();
  const server: Server = createServer((client) => {
    client.on('error', () => {});
    if (mode === 'reset') return void client.destroy();
    if (mode === 'hold') {
      held.add(client);
      client.on('close', () => held.delete(client));
      return;
    }
    const upstream = tcpConnect(target.port, target.host);
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream).pipe(client);
    open.add(client);
    client.on('close', () => open.delete(client));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no proxy address');
  return {
    port: address.port,
    cut(how: 'hold' | 'reset') {
      mode = how;
      for (const s of open) s.destroy();
      if (how === 'reset') for (const s of held) s.destroy();
    },
    restore() {
      mode = 'open';
      for (const s of held) s.destroy();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface Answer {
  phase: 'before' | 'cut' | 'after';
  method: string;
  status: number;
  retryAfter: string | null;
  ms: number;
  body: string;
  at: number;
}

/**
 * Issue 30: PostgreSQL goes away under steady load and comes back. The real server runs
 * as a child process (DATABASE_CONNECT_TIMEOUT=2s) with its database behind a proxy the
 * test cuts, first as a partition (connections hang) and then as a stopped server
 * (connections reset). Four clients GET and POST /api/customers all the while. Every
 * answer is 2xx or 503 with Retry-After, none hangs, /readyz follows the database and
 * /healthz stays 200, the outage is logged once, every 201 customer is in the database
 * afterwards and every one of their customer.created webhooks arrives.
 */
describe.skipIf(info.kind !== 'postgres')('a database outage under load (PostgreSQL, real server process)', () => {
  let env: Awaited<ReturnType<typeof processEnvironment>>;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let receiver: Receiver;
  let server: Run;
  let base: string;
  let directUrl: string;

  beforeAll(async () => {
    env = await processEnvironment('outage');
    directUrl = env.env.DATABASE_URL as string;
    const url = new URL(directUrl);
    proxy = await startProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    receiver = await startReceiver();
    const started = await startServer({
      ...env.env,
      DATABASE_URL: url.toString(),
      DATABASE_CONNECT_TIMEOUT: `${CONNECT_TIMEOUT_MS}ms`,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s',
      RATE_LIMIT_PER_MINUTE: '1000000',
    });
    server = started.run;
    base = started.base;
  });
  afterAll(async () => {
    if (server) await stop(server);
    await receiver?.close();
    await proxy?.close();
    await env?.cleanup();
  });

  it('answers 2xx or 503 with Retry-After, follows the database in /readyz, and loses nothing', async () => {
    const { cookie, orgId } = await signUpWithOrganization(base, 'Outage Lawn');
    const json = { 'content-type': 'application/json', cookie };
    const hook = await fetch(`${base}/api/webhooks`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ url: receiver.url, events: ['customer.created'] }),
    });
    expect(hook.status, await hook.clone().text()).toBe(201);

    let phase: Answer['phase'] = 'before';
    let running = true;
    const answers: Answer[] = [];
    const failures: string[] = [];
    const created = new Set<string>();
    const countIn = (p: Answer['phase']) => answers.filter((a) => a.phase === p).length;

    const client = async (n: number) => {
      for (let i = 0; running; i++) {
        const post = n % 2 === 0;
        const started = Date.now();
        const at = phase;
        try {
          const res = await fetch(`${base}/api/customers${post ? '' : '?limit=5'}`, {
            method: post ? 'POST' : 'GET',
            headers: json,
            ...(post ? { body: JSON.stringify({ firstName: `Out${n}x${i}`, lastName: 'Age' }) } : {}),
            signal: AbortSignal.timeout(HUNG_MS * 4),
          });
          const body = await res.text();
          answers.push({
            phase: at,
            method: post ? 'POST' : 'GET',
            status: res.status,
            retryAfter: res.headers.get('retry-after'),
            ms: Date.now() - started,
            body: body.slice(0, 300),
            at: Date.now(),
          });
          if (res.status === 201) created.add((JSON.parse(body) as { data: { id: string } }).data.id);
          if (res.status === 503) await new Promise((r) => setTimeout(r, 100));
        } catch (err) {
          failures.push(`${post ? 'POST' : 'GET'} failed without an answer: ${String(err)}`);
        }
      }
    };

    // `phase` is when the probe was sent, `answeredIn` when its answer came.
    const probes: Array<{
      phase: Answer['phase'];
      answeredIn: Answer['phase'];
      path: string;
      status: number;
      at: number;
    }> = [];
    const prober = async () => {
      while (running) {
        for (const path of ['/readyz', '/healthz']) {
          const at = phase;
          const res = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(HUNG_MS * 4) }).catch(() => null);
          await res?.text();
          probes.push({ phase: at, answeredIn: phase, path, status: res?.status ?? 0, at: Date.now() });
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    };

    // A guard against a hung scenario (it names the step that never came), not a timing assertion.
    const until = async (step: string, done: () => boolean) => {
      const give = Date.now() + 90_000;
      while (!done()) {
        if (Date.now() > give) {
          running = false;
          const statuses = answers.reduce<Record<string, number>>((m, a) => {
            const k = `${a.phase} ${a.status}`;
            m[k] = (m[k] ?? 0) + 1;
            return m;
          }, {});
          throw new Error(
            `never happened: ${step}; ${receiver.received.length} webhook requests received; answers ${JSON.stringify(statuses)}; failures ${failures.slice(0, 3)}; server:\n${server.output().slice(-3000)}`,
          );
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    };

    const load = [...Array.from({ length: CLIENTS }, (_, n) => client(n)), prober()];
    await until('answers before the cut', () => countIn('before') >= ANSWERS_BEFORE_CUT);

    // A partition first (connections hang until the pool's time-out), then a stopped server.
    phase = 'cut';
    proxy.cut('hold');
    await until(
      '503s during the partition',
      () => answers.filter((a) => a.phase === 'cut' && a.status === 503).length >= ANSWERS_WHILE_CUT / 2,
    );
    proxy.cut('reset');
    await until('answers while stopped', () => countIn('cut') >= ANSWERS_WHILE_CUT);
    await until('/readyz 503 during the cut', () =>
      probes.some((p) => p.phase === 'cut' && p.path === '/readyz' && p.status === 503),
    );

    phase = 'after';
    const restoredAt = Date.now();
    proxy.restore();
    await until(
      '2xx after the restore',
      () => answers.filter((a) => a.phase === 'after' && a.status < 300).length >= ANSWERS_AFTER_RESTORE,
    );
    await until('/readyz 200 after the restore', () =>
      probes.some((p) => p.phase === 'after' && p.path === '/readyz' && p.status === 200),
    );
    running = false;
    await Promise.all(load);

    // Only 2xx, or 503 SERVICE_UNAVAILABLE with Retry-After; never 401/403/404/500.
    const wrong = answers.filter(
      (a) =>
        !(a.status >= 200 && a.status < 300) &&
        !(a.status === 503 && a.retryAfter !== null && JSON.parse(a.body).error.code === 'SERVICE_UNAVAILABLE'),
    );
    expect(wrong.map((a) => `${a.phase} ${a.method} → ${a.status} ${a.body}`)).toEqual([]);
    expect(failures).toEqual([]);
    expect(answers.filter((a) => a.phase === 'cut' && a.status === 503).length).toBeGreaterThan(0);
    // Nothing hangs: every answer within a generous multiple of the pool's connection time-out.
    const slowest = Math.max(...answers.map((a) => a.ms));
    expect(slowest).toBeLessThan(HUNG_MS);

    // /readyz followed the database; /healthz stayed 200 throughout.
    expect(probes.filter((p) => p.path === '/healthz').every((p) => p.status === 200)).toBe(true);
    const readyBefore = probes.filter((p) => p.answeredIn === 'before' && p.path === '/readyz');
    expect(readyBefore.length).toBeGreaterThan(0);
    expect(readyBefore.every((p) => p.status === 200)).toBe(true);

    // Logged once per outage, not once per request.
    await until('"database back" logged', () => /database back/.test(server.output()));
    const out = server.output();
    expect(out.match(/database unreachable/g)).toHaveLength(1);
    expect(out.match(/"msg":"database back"/g)).toHaveLength(1);
    expect(out).not.toMatch(/unhandled error/);

    // Every 201 is in the database, and its webhook arrived.
    const direct = new pg.Client({ connectionString: directUrl });
    await direct.connect();
    try {
      const { rows } = await direct.query<{ id: string }>('SELECT id FROM customers WHERE organization_id = $1', [
        orgId,
      ]);
      const stored = new Set(rows.map((r) => r.id));
      expect([...created].filter((id) => !stored.has(id))).toEqual([]);
    } finally {
      await direct.end();
    }
    const delivered = () =>
      new Set(
        receiver.received
          .filter((r) => r.headers['x-service-event'] === 'customer.created')
          .map((r) => (JSON.parse(r.body) as { data: { customerId: string } }).data.customerId),
      );
    await until('every webhook delivered', () => [...created].every((id) => delivered().has(id)));

    const firstOk = answers.find((a) => a.phase === 'after' && a.status < 300);
    const firstReady = probes.find((p) => p.phase === 'after' && p.path === '/readyz' && p.status === 200);
    console.log(
      `outage test: ${answers.length} answers (${answers.filter((a) => a.status === 503).length} × 503), ` +
        `${created.size} customers created, slowest answer ${slowest} ms, ` +
        `first 2xx ${(firstOk?.at ?? restoredAt) - restoredAt} ms and /readyz 200 ${(firstReady?.at ?? restoredAt) - restoredAt} ms after the restore`,
    );
  }, 240_000);
});
