import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Receiver, startReceiver } from '../webhooks/helpers.js';
import { processEnvironment, type Run, run, signUpWithOrganization, startServer, stop, waitFor } from './processes.js';

const onPostgres = inject('database').kind === 'postgres';

/**
 * The deployment of the README's "Scaling out", for real: two API processes and two
 * workers on one PostgreSQL database, behind a proxy that sends each request to the
 * next API process in turn. Consecutive requests of one client therefore land on
 * different processes, each with its own credential cache.
 */
describe.skipIf(!onPostgres)('two API processes and two workers behind a round-robin proxy', () => {
  let cleanup: () => Promise<void>;
  const runs: Run[] = [];
  let env: Record<string, string>;
  const workers: Run[] = [];
  let proxy: Server;
  let base: string;
  let receiver: Receiver;
  const upstreams: string[] = [];
  const hits = new Map<string, number>();

  beforeAll(async () => {
    const environment = await processEnvironment('multi');
    cleanup = environment.cleanup;
    env = {
      ...environment.env,
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
    upstreams.push(first.base, second.base);
    let next = 0;
    proxy = createServer((req, res) => {
      const target = new URL(req.url ?? '/', upstreams[next++ % upstreams.length]);
      hits.set(target.origin, (hits.get(target.origin) ?? 0) + 1);
      const out = request(target, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      out.on('error', () => res.writeHead(502).end());
      req.pipe(out);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    receiver = await startReceiver();
  }, 180_000);

  afterAll(async () => {
    await receiver?.close();
    await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(null)));
    await Promise.all(runs.map((r) => stop(r)));
    await cleanup?.();
  }, 60_000);

  const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  };

  it('signs in, refuses a revoked key on every process at once, replays idempotent requests and delivers webhooks once', async () => {
    const { cookie } = await signUpWithOrganization(base);
    const asOwner = { cookie };
    for (let i = 0; i < 4; i++) expect((await call('GET', '/api/members', asOwner)).status).toBe(200);
    expect([...hits.keys()]).toHaveLength(2); // both processes served the session

    // API key: used (and cached) on both processes, revoked through one, refused by both at once.
    const key = await call('POST', '/api/api-keys', asOwner, { name: 'sync', role: 'admin' });
    expect(key.status).toBe(201);
    const asKey = { authorization: `Bearer ${key.json.data.key}` };
    for (let i = 0; i < 4; i++) expect((await call('GET', '/api/members', asKey)).status).toBe(200);
    expect((await call('DELETE', `/api/api-keys/${key.json.data.id}`, asOwner)).status).toBe(204);
    const after = [];
    for (let i = 0; i < 4; i++) after.push((await call('GET', '/api/members', asKey)).status);
    expect(after).toEqual([401, 401, 401, 401]);

    // Idempotency: the replay lands on the other process and gets the first answer.
    const idem = { ...asOwner, 'idempotency-key': 'multi-1' };
    const invite = { email: 'sam@example.com', role: 'member' };
    const one = await call('POST', '/api/invitations', idem, invite);
    const two = await call('POST', '/api/invitations', idem, invite);
    expect(one.status).toBe(201);
    expect(two.status).toBe(201);
    expect(two.json.data.id).toBe(one.json.data.id);

    // Webhooks: two workers, each event delivered once.
    const ep = await call('POST', '/api/webhooks', asOwner, { url: receiver.url, events: ['customer.created'] });
    expect(ep.status).toBe(201);
    const N = 10;
    for (let i = 0; i < N; i++) {
      const c = await call('POST', '/api/customers', asOwner, { firstName: 'Multi', lastName: `Process ${i}` });
      expect(c.status).toBe(201);
    }
    for (;;) {
      const list = await call('GET', `/api/webhooks/${ep.json.data.id}/deliveries`, asOwner);
      const rows = list.json.data as Array<{ status: string }>;
      if (rows.length === N && rows.every((d) => d.status === 'succeeded')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const ids = receiver.received.map((r) => r.headers['x-service-delivery']);
    expect(ids).toHaveLength(N);
    expect(new Set(ids).size).toBe(N);
  }, 120_000);

  it('runs a sweep once: two workers sweeping the same overdue invoices at the same moment make each change and event once', async () => {
    // The workers of the first test sweep every minute at their own moments: stop them, so the
    // sweep below is the one two fresh workers both run at once, at start.
    await Promise.all(workers.splice(0).map((w) => stop(w)));
    const { cookie } = await signUpWithOrganization(base, 'Sweep Lawn');
    const asOwner = { cookie };
    const ep = await call('POST', '/api/webhooks', asOwner, { url: receiver.url, events: ['invoice.overdue'] });
    expect(ep.status).toBe(201);
    const customer = await call('POST', '/api/customers', asOwner, { firstName: 'Sweep', lastName: 'Once' });
    expect(customer.status).toBe(201);
    // Invoiced and due ten days ago (computed now), then sent: overdue for the next sweep.
    const tenDaysAgo = new Date(Date.now() - 10 * 86_400_000).toISOString().slice(0, 10);
    const invoiceIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const inv = await call('POST', '/api/invoices', asOwner, {
        customerId: customer.json.data.id,
        invoiceDate: tenDaysAgo,
        dueDate: tenDaysAgo,
        lineItems: [{ description: `Mowing ${i}`, quantity: 1, unitPrice: 40 }],
      });
      expect(inv.status).toBe(201);
      expect((await call('POST', `/api/invoices/${inv.json.data.id}/send`, asOwner)).status).toBe(200);
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
    const deliveries = await call('GET', `/api/webhooks/${ep.json.data.id}/deliveries`, asOwner);
    expect(deliveries.json.data).toHaveLength(invoiceIds.length);
    for (const id of invoiceIds) {
      expect((await call('GET', `/api/invoices/${id}`, asOwner)).json.data.status).toBe('overdue');
    }
  }, 180_000);
});
