import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { eq, sql } from 'drizzle-orm';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningWorker, startTasks } from '../../src/background/runner.js';
import { type Database, openDatabase } from '../../src/db/client.js';
import { webhookDeliveries, webhookEndpoints } from '../../src/db/schema/index.js';
import { createWebhookTask } from '../../src/delivery/delivery.task.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { emitEvents, RETRY_ENV, type Receiver, startReceiver, waitFor } from './helpers.js';

const onPostgres = inject('database').kind === 'postgres';
const CHILD = fileURLToPath(new URL('./fixtures/worker-child.ts', import.meta.url));
// The worker runs in node itself (tsx as a loader), not under the tsx CLI: the CLI is a
// wrapper process, and SIGKILL on it would leave the real worker running as an orphan.
const TSX_LOADER = import.meta.resolve('tsx');

/** Fault tests need several processes/connections on one database: PostgreSQL only. */
describe.skipIf(!onPostgres)('webhook worker under faults (PostgreSQL)', () => {
  let h: Harness;
  let owner: TestUser;
  let url: string;
  const cleanups: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    h = await createHarness(RETRY_ENV);
    owner = await newTenant(h);
    url = (h.database.pool as unknown as { options: { connectionString: string } }).options.connectionString;
  });
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
    await h?.close();
  });

  const ownWorker = async (): Promise<{ database: Database; worker: RunningWorker }> => {
    const database = await openDatabase({ databaseUrl: url, poolMax: 5 });
    const worker = startTasks([createWebhookTask({ pollMs: 50 })], {
      config: h.config,
      database,
      log: pino({ level: 'silent' }),
    });
    cleanups.push(async () => {
      await worker.stop();
      // Also proves no pooled connection leaked: pool.end() waits for every client.
      await database.close();
    });
    return { database, worker };
  };
  const receiver = async (respond?: Parameters<typeof startReceiver>[0]) => {
    const r = await startReceiver(respond);
    cleanups.push(() => r.close());
    return r;
  };
  const register = async (r: Receiver, events: string[]) => {
    const res = await owner.call('POST', '/api/webhooks', { url: r.url, events });
    expect(res.statusCode).toBe(201);
    return res.json().data.id as string;
  };
  const deliveriesOf = (endpointId: string) =>
    h.admin.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpointId));

  it('loses nothing when a worker is killed with SIGKILL mid-delivery', async () => {
    const r = await receiver((_req, res, n) => {
      if (n > 1) res.writeHead(200).end('ok'); // the first request stalls: its worker dies holding it
    });
    const endpointId = await register(r, ['invoice.voided']);
    const child = spawn(process.execPath, ['--import', TSX_LOADER, CHILD], {
      env: { ...process.env, CHILD_DATABASE_URL: url, CHILD_LEASE_MS: '1500' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    cleanups.push(async () => {
      child.kill('SIGKILL');
      await exited;
    });
    await emitEvents(h.database, owner.organizationId, [{ type: 'invoice.voided', data: { invoiceId: 'inv_k' } }]);
    await waitFor(() => r.received.length === 1, 'the child worker to send', 60_000);
    child.kill('SIGKILL');
    await exited;

    const [claimed] = await deliveriesOf(endpointId);
    expect(claimed?.status).toBe('pending');
    // Still leased by the dead worker, on its endpoint's row.
    const [endpoint] = await h.admin.db
      .select({ ids: webhookEndpoints.inflightIds, until: webhookEndpoints.inflightUntil })
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.id, endpointId));
    expect(endpoint?.ids).toEqual([claimed?.id]);
    expect(endpoint?.until).toHaveLength(1);
    expect(claimed?.attemptCount).toBe(0);

    await ownWorker();
    const [done] = await waitFor(async () => {
      const rows = await deliveriesOf(endpointId);
      return rows[0]?.status === 'succeeded' ? rows : null;
    }, 'delivery after the lease expired');
    expect(r.received).toHaveLength(2);
    expect(r.received.map((x) => x.headers['x-service-delivery'])).toEqual([done?.id, done?.id]);
  });

  it('keeps running and delivers when the database drops its connections for a few seconds', async () => {
    const r = await receiver();
    const endpointId = await register(r, ['customer.updated']);
    const { database } = await ownWorker();
    await emitEvents(h.database, owner.organizationId, [{ type: 'customer.updated', data: { customerId: 'cus_0' } }]);
    await waitFor(() => r.received.length === 1, 'first delivery');

    // A superuser: the service role may not terminate the backends of other roles.
    const info = inject('database');
    if (info.kind !== 'postgres') throw new Error('PostgreSQL only');
    const admin = new pg.Client({ connectionString: info.url });
    await admin.connect();
    const dbName = new URL(url).pathname.slice(1);
    const until = Date.now() + 2500;
    let emitted = 1;
    while (Date.now() < until) {
      await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [dbName],
      );
      // Events committed during the outage (when a connection survives long enough) must still go out.
      await emitEvents(h.database, owner.organizationId, [
        { type: 'customer.updated', data: { customerId: `cus_${emitted}` } },
      ]).then(
        () => emitted++,
        () => {},
      );
      await new Promise((res) => setTimeout(res, 100));
    }
    await admin.end();
    await emitEvents(h.database, owner.organizationId, [
      { type: 'customer.updated', data: { customerId: `cus_${emitted}` } },
    ]);
    emitted++;
    await waitFor(
      async () => {
        const rows = await deliveriesOf(endpointId);
        return rows.length === emitted && rows.every((x) => x.status === 'succeeded');
      },
      'every delivery after the outage',
      60_000,
    );
    const seen = new Set(r.received.map((x) => JSON.parse(x.body).data.customerId));
    expect(seen.size).toBe(emitted);
    // The worker's connections came back. Its claims, results and fan-out go through the
    // platform pool (the deliveries above); its main pool (transactions, the outage probe) is
    // used only when something fails, so it may hold no connection now: it must answer again,
    // not stay wedged. (Waiting for it to hold one by itself raced with whether the outage
    // happened to break a query under way.)
    await waitFor(
      () =>
        database.db.execute(sql`SELECT 1`).then(
          () => true,
          () => false,
        ),
      "the worker's main pool to answer",
    );
  });

  it('two workers on one database send each scheduled attempt exactly once', async () => {
    const counts = new Map<string, number>();
    const r = await receiver((req, res) => {
      const id = String(req.headers['x-service-delivery']);
      counts.set(id, (counts.get(id) ?? 0) + 1);
      setTimeout(() => res.writeHead(200).end(), Math.floor(Math.random() * 15));
    });
    const eps = [await register(r, ['estimate.created']), await register(r, ['estimate.created'])];
    await ownWorker();
    await ownWorker();
    const N = 40;
    for (let i = 0; i < N; i += 10) {
      await emitEvents(
        h.database,
        owner.organizationId,
        Array.from({ length: 10 }, (_, j) => ({ type: 'estimate.created', data: { estimateId: `est_${i + j}` } })),
      );
    }
    await waitFor(
      async () => {
        const rows = [...(await deliveriesOf(eps[0] as string)), ...(await deliveriesOf(eps[1] as string))];
        return rows.length === 2 * N && rows.every((x) => x.status === 'succeeded');
      },
      'all deliveries',
      60_000,
    );
    expect(counts.size).toBe(2 * N);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(r.received).toHaveLength(2 * N);
  });
});
