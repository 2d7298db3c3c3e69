import { existsSync, readFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { withUser } from '../global-setup.js';
import { type Receiver, startReceiver } from '../webhooks/helpers.js';
import { type Bouncer, hasPgbouncer, startPgBouncer } from './pgbouncer.js';
import { processEnvironment, type Run, run, signUpWithOrganization, startServer, stop, waitFor } from './processes.js';
import { REDIS_URL, redisReachable } from './redis.js';

const info = inject('database');
const onPostgres = info.kind === 'postgres';
const hasRedis = onPostgres && (await redisReachable());

/**
 * A proxy that sends each request to the next upstream in turn and says which one
 * answered (`x-upstream`), so consecutive requests of one client land on different processes.
 */
async function roundRobin(upstreams: string[]) {
  let next = 0;
  const server = createServer((req, res) => {
    const target = new URL(req.url ?? '/', upstreams[next++ % upstreams.length]);
    const out = request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, { ...answer.headers, 'x-upstream': target.origin });
      answer.pipe(res);
    });
    out.on('error', () => res.writeHead(502).end());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** A JSON call through `base`; the answer's status, body and the process that gave it. */
async function call(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return {
    status: res.status,
    json: text ? JSON.parse(text) : null,
    upstream: res.headers.get('x-upstream'),
    retryAfter: Number(res.headers.get('retry-after')),
  };
}

/**
 * The deployment of docs/scaling.md ("One process, then many"), for real: two API processes and two
 * workers on one PostgreSQL database, behind a proxy that sends each request to the
 * next API process in turn. Consecutive requests of one client therefore land on
 * different processes, each with its own credential cache. Every process connects as the
 * service's non-superuser login role (the README's least privilege; only the start-up
 * migration connects as the schema's owner, directly): once directly, and once with
 * DATABASE_URL through PgBouncer in transaction pooling (LISTEN_DATABASE_URL and
 * MIGRATION_DATABASE_URL direct), where nothing may rest on session state.
 */
for (const via of ['direct', 'pgbouncer'] as const)
  describe.skipIf(!onPostgres || (via === 'pgbouncer' && !hasPgbouncer))(
    `two API processes and two workers behind a round-robin proxy (${via})`,
    () => {
      let cleanup: () => Promise<void>;
      const runs: Run[] = [];
      let env: Record<string, string>;
      const workers: Run[] = [];
      let proxy: Awaited<ReturnType<typeof roundRobin>> | undefined;
      let bouncer: Bouncer | undefined;
      let base = '';
      let receiver: Receiver;
      let mailFile = '';

      beforeAll(async () => {
        if (info.kind !== 'postgres') return;
        const environment = await processEnvironment(`multi_${via}`, { empty: true });
        cleanup = environment.cleanup;
        mailFile = environment.env.MAIL_OUTBOX_FILE as string;
        const ownerUrl = environment.env.DATABASE_URL as string;
        const serviceUrl = withUser(ownerUrl, info.service);
        if (via === 'pgbouncer') bouncer = await startPgBouncer(info.url, [info.service]);
        env = {
          ...environment.env,
          DATABASE_URL: bouncer ? bouncer.through(serviceUrl) : serviceUrl,
          LISTEN_DATABASE_URL: serviceUrl,
          MIGRATION_DATABASE_URL: ownerUrl,
          RUN_WORKER: 'false',
          DEFAULT_PLAN: 'business',
          WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
          LOG_LEVEL: 'info',
        };
        // The first migrates the fresh database; the others find it current.
        const first = await startServer(env);
        const [second] = await Promise.all([
          startServer(env),
          ...[0, 1].map(async () => {
            const w = run('src/worker.ts', [], { ...env, LOG_LEVEL: 'info' });
            runs.push(w);
            workers.push(w);
            await waitFor(w, /worker started/);
          }),
        ]);
        runs.push(first.run, second.run);
        proxy = await roundRobin([first.base, second.base]);
        base = proxy.base;
        receiver = await startReceiver();
      }, 180_000);

      afterAll(async () => {
        await receiver?.close();
        await proxy?.close();
        await Promise.all(runs.map((r) => stop(r)));
        // No process met session state another client left (a prepared statement, a role).
        for (const r of runs) expect(r.output()).not.toMatch(/prepared statement|permission denied/);
        await bouncer?.stop();
        await cleanup?.();
      }, 60_000);

      const api = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
        call(base, method, path, headers, body);

      it('signs in, refuses a revoked key on every process at once, replays idempotent requests and delivers webhooks once', async () => {
        const { cookie } = await signUpWithOrganization(base);
        const asOwner = { cookie };
        const served = new Set<string | null>();
        for (let i = 0; i < 4; i++) {
          const members = await api('GET', '/api/members', asOwner);
          expect(members.status).toBe(200);
          served.add(members.upstream);
        }
        expect(served.size).toBe(2); // both processes served the session

        // API key: used (and cached) on both processes, revoked through one, refused by both at once.
        const key = await api('POST', '/api/api-keys', asOwner, { name: 'sync', role: 'admin' });
        expect(key.status).toBe(201);
        const asKey = { authorization: `Bearer ${key.json.data.key}` };
        for (let i = 0; i < 4; i++) expect((await api('GET', '/api/members', asKey)).status).toBe(200);
        expect((await api('DELETE', `/api/api-keys/${key.json.data.id}`, asOwner)).status).toBe(204);
        const after = [];
        for (let i = 0; i < 4; i++) after.push((await api('GET', '/api/members', asKey)).status);
        expect(after).toEqual([401, 401, 401, 401]);

        // Idempotency: the replay lands on the other process and gets the first answer.
        const idem = { ...asOwner, 'idempotency-key': 'multi-1' };
        const invite = { email: 'sam@example.com', role: 'member' };
        const one = await api('POST', '/api/invitations', idem, invite);
        const two = await api('POST', '/api/invitations', idem, invite);
        expect(one.status).toBe(201);
        expect(two.status).toBe(201);
        expect(two.json.data.id).toBe(one.json.data.id);
        // The invitation's mail, sent once by one of the workers.
        const mails = () =>
          existsSync(mailFile)
            ? readFileSync(mailFile, 'utf8')
                .split('\n')
                .filter((l) => l.includes('sam@example.com'))
            : [];
        while (mails().length === 0) await new Promise((r) => setTimeout(r, 100));

        // Webhooks: two workers, each event delivered once.
        const ep = await api('POST', '/api/webhooks', asOwner, { url: receiver.url, events: ['customer.created'] });
        expect(ep.status).toBe(201);
        const N = 10;
        for (let i = 0; i < N; i++) {
          const c = await api('POST', '/api/customers', asOwner, { firstName: 'Multi', lastName: `Process ${i}` });
          expect(c.status).toBe(201);
        }
        for (;;) {
          const list = await api('GET', `/api/webhooks/${ep.json.data.id}/deliveries`, asOwner);
          const rows = list.json.data as Array<{ status: string }>;
          if (rows.length === N && rows.every((d) => d.status === 'succeeded')) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        const ids = receiver.received.map((r) => r.headers['x-service-delivery']);
        expect(ids).toHaveLength(N);
        expect(new Set(ids).size).toBe(N);
      }, 120_000);

      it('counts sign-in failures once per email whichever process takes them, and both refuse the eleventh', async () => {
        const { email } = await signUpWithOrganization(base, 'Guarded Lawn');
        const signIn = (password: string) => api('POST', '/api/auth/sign-in/email', {}, { email, password });
        const failed = [];
        for (let i = 0; i < 10; i++) failed.push(await signIn('wrong password 123'));
        expect(failed.map((r) => r.status)).toEqual(Array(10).fill(401));
        expect(new Set(failed.map((r) => r.upstream)).size).toBe(2);
        // Counted per process, each would have seen five and let these through.
        const refused = [await signIn('wrong password 123'), await signIn('correct horse battery')];
        for (const r of refused) {
          expect(r.status).toBe(429);
          expect(r.json.error.code).toBe('RATE_LIMITED');
          expect(r.retryAfter).toBeGreaterThan(0);
        }
        expect(new Set(refused.map((r) => r.upstream)).size).toBe(2);
      }, 60_000);

      it('runs a sweep once: two workers sweeping the same overdue invoices at the same moment make each change and event once', async () => {
        // The workers of the first test sweep every minute at their own moments: stop them, so the
        // sweep below is the one two fresh workers both run at once, at start.
        await Promise.all(workers.splice(0).map((w) => stop(w)));
        const { cookie } = await signUpWithOrganization(base, 'Sweep Lawn');
        const asOwner = { cookie };
        const ep = await api('POST', '/api/webhooks', asOwner, { url: receiver.url, events: ['invoice.overdue'] });
        expect(ep.status).toBe(201);
        const customer = await api('POST', '/api/customers', asOwner, { firstName: 'Sweep', lastName: 'Once' });
        expect(customer.status).toBe(201);
        // Invoiced and due ten days ago (computed now), then sent: overdue for the next sweep.
        const tenDaysAgo = new Date(Date.now() - 10 * 86_400_000).toISOString().slice(0, 10);
        const invoiceIds: string[] = [];
        for (let i = 0; i < 3; i++) {
          const inv = await api('POST', '/api/invoices', asOwner, {
            customerId: customer.json.data.id,
            invoiceDate: tenDaysAgo,
            dueDate: tenDaysAgo,
            lineItems: [{ description: `Mowing ${i}`, quantity: 1, unitPrice: 40 }],
          });
          expect(inv.status).toBe(201);
          expect((await api('POST', `/api/invoices/${inv.json.data.id}/send`, asOwner)).status).toBe(200);
          invoiceIds.push(inv.json.data.id);
        }

        // Two workers started together: each runs every task at start, the sweep included.
        const fresh = [0, 1].map(() => run('src/worker.ts', [], { ...env, LOG_LEVEL: 'info' }));
        runs.push(...fresh);
        workers.push(...fresh);
        await Promise.all(fresh.map((w) => waitFor(w, /worker started/)));
        const overdueEvents = () => receiver.received.filter((r) => r.headers['x-service-event'] === 'invoice.overdue');
        while (overdueEvents().length < invoiceIds.length) await new Promise((r) => setTimeout(r, 100));
        // Graceful stop waits for every task under way: nothing more can come after this.
        await Promise.all(workers.splice(0).map((w) => stop(w)));

        const swept = overdueEvents().map((r) => JSON.parse(r.body).data.invoiceId as string);
        expect(swept.sort()).toEqual([...invoiceIds].sort());
        const deliveries = await api('GET', `/api/webhooks/${ep.json.data.id}/deliveries`, asOwner);
        expect(deliveries.json.data).toHaveLength(invoiceIds.length);
        for (const id of invoiceIds) {
          expect((await api('GET', `/api/invoices/${id}`, asOwner)).json.data.status).toBe('overdue');
        }
      }, 180_000);
    },
  );

/**
 * The README's scaled-out deployment with its shared Redis: two API processes whose
 * requests count against one budget per principal, whichever process serves them.
 */
describe.skipIf(!hasRedis)('two API processes sharing one Redis behind a round-robin proxy', () => {
  const LIMIT = 6;
  let cleanup: (() => Promise<void>) | undefined;
  const runs: Run[] = [];
  let proxy: Awaited<ReturnType<typeof roundRobin>> | undefined;
  let base = '';

  beforeAll(async () => {
    const environment = await processEnvironment('multi-redis', { empty: true });
    cleanup = environment.cleanup;
    const env = {
      ...environment.env,
      RUN_WORKER: 'false',
      REDIS_URL,
      RATE_LIMIT_PER_MINUTE: String(LIMIT),
      LOG_LEVEL: 'info',
    };
    // The first migrates the fresh database; the second finds it current.
    const first = await startServer(env);
    runs.push(first.run);
    const second = await startServer(env);
    runs.push(second.run);
    proxy = await roundRobin([first.base, second.base]);
    base = proxy.base;
  }, 180_000);

  afterAll(async () => {
    await proxy?.close();
    await Promise.all(runs.map((r) => stop(r)));
    await cleanup?.();
  }, 60_000);

  it('gives an API key one budget over both processes: the seventh request is refused by each', async () => {
    const { cookie } = await signUpWithOrganization(base, 'Budget Lawn');
    const key = await call(base, 'POST', '/api/api-keys', { cookie }, { name: 'sync', role: 'admin' });
    expect(key.status).toBe(201);
    const asKey = { authorization: `Bearer ${key.json.data.key}` };
    const answers = [];
    for (let i = 0; i < LIMIT + 2; i++) answers.push(await call(base, 'GET', '/api/members', asKey));
    // Counted per process, each would have allowed six and all eight would pass.
    expect(answers.map((r) => r.status)).toEqual([...Array(LIMIT).fill(200), 429, 429]);
    expect(new Set(answers.slice(0, LIMIT).map((r) => r.upstream)).size).toBe(2);
    const refused = answers.slice(LIMIT);
    expect(new Set(refused.map((r) => r.upstream)).size).toBe(2);
    for (const r of refused) {
      expect(r.json.error.code).toBe('RATE_LIMITED');
      expect(r.retryAfter).toBeGreaterThan(0);
    }
  }, 60_000);
});
