import { sql } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type Database, openDatabase, rowsOf } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { createWebhookTask } from '../../src/delivery/delivery.task.js';
import { dispatchEvents } from '../../src/delivery/fanout.js';
import { claimDeliveries } from '../../src/delivery/queue.js';
import { asPlatform } from '../../src/platform/cross-tenant.js';
import { WAKE_CHANNEL } from '../../src/platform/events/outbox.js';
import { transactionAs } from '../../src/platform/tenancy.js';
import { withUser } from '../global-setup.js';
import { TEST_ENV } from '../harness.js';
import { type Bouncer, hasPgbouncer, startPgBouncer } from './pgbouncer.js';
import { processEnvironment } from './processes.js';

/**
 * Behind PgBouncer in transaction pooling (test/platform/pgbouncer.ts), as the service's
 * non-superuser login role: nothing may depend on session state, since each transaction may
 * get another server connection, one that another client used last. Issue 29 item 5: a LISTEN
 * made through PgBouncer never hears a NOTIFY, so the worker's LISTEN takes LISTEN_DATABASE_URL,
 * a direct connection. The whole deployment (two API processes, two workers, webhooks, sweeps,
 * mail) runs through PgBouncer in test/platform/multi-process.test.ts. Runs on PostgreSQL when
 * Debian's `pgbouncer` is installed; reported as skipped otherwise.
 */
const info = inject('database');

describe.skipIf(info.kind !== 'postgres' || !hasPgbouncer)('the service behind PgBouncer (transaction pooling)', () => {
  let bouncer: Bouncer | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  let pooledUrl = '';
  let directUrl = '';
  const opened: Database[] = [];

  beforeAll(async () => {
    if (info.kind !== 'postgres') return;
    const environment = await processEnvironment('bouncer');
    cleanup = environment.cleanup;
    const ownerUrl = environment.env.DATABASE_URL as string;
    // The schema, migrated as its owner on a direct connection (as MIGRATION_DATABASE_URL is).
    const owner = await openDatabase({ databaseUrl: ownerUrl, poolMax: 1 });
    await migrate(owner);
    await owner.close();
    directUrl = withUser(ownerUrl, info.service);
    bouncer = await startPgBouncer(info.url, [info.service]);
    pooledUrl = bouncer.through(directUrl);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(opened.map((d) => d.close()));
    await bouncer?.stop();
    await cleanup?.();
  });

  const open = async () => {
    const database = await openDatabase({ databaseUrl: pooledUrl, poolMax: 3 });
    opened.push(database);
    return database;
  };
  const who = (r: unknown) => rowsOf<{ who: string; su: string }>(r)[0];
  const WHO = sql`SELECT current_user AS who, current_setting('is_superuser') AS su`;

  it('runs every pool as a non-superuser role, switched per transaction: the platform pool included', async () => {
    const database = await open();
    // The login role itself: neither superuser nor anything but itself.
    expect(who(await database.db.execute(WHO))).toEqual({
      who: info.kind === 'postgres' ? info.service : '',
      su: 'off',
    });
    // Better Auth's handle: crm_platform for each statement and each transaction, though
    // PgBouncer dropped any startup option.
    expect(who(await database.platformDb.execute(WHO))).toEqual({ who: 'crm_platform', su: 'off' });
    expect(who(await database.platformDb.transaction((tx) => tx.execute(WHO)))).toEqual({
      who: 'crm_platform',
      su: 'off',
    });
    expect(await database.platformQuery({ text: "SELECT current_user, current_setting('is_superuser')" }, [])).toEqual([
      ['crm_platform', 'off'],
    ]);
    expect(who(await asPlatform(database.db, (tx) => tx.execute(WHO)))).toEqual({ who: 'crm_platform', su: 'off' });
    expect(who(await transactionAs(database.db, { role: 'crm_app' }, (tx) => tx.execute(WHO)))).toEqual({
      who: 'crm_app',
      su: 'off',
    });
    // Nothing leaks to the next transaction on the same server connection.
    expect(who(await database.db.execute(WHO))?.who).not.toMatch(/^crm_(app|platform)$/);
  });

  it("sends the worker's statements from many clients at once without meeting one another client prepared", async () => {
    const [one, two] = [await open(), await open()];
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 40; i++) {
      const database = i % 2 ? one : two;
      calls.push(
        claimDeliveries(database, { limit: 5, perEndpoint: 2, leaseMs: 30_000 }),
        dispatchEvents(database),
        database.platformQuery({ text: 'SELECT $1::int + 1, current_user' }, [i]),
      );
    }
    const results = await Promise.all(calls);
    expect(results.filter((_r, i) => i % 3 === 0)).toEqual(Array(40).fill([]));
    expect(results.filter((_r, i) => i % 3 === 2).map((r) => (r as unknown[][])[0])).toEqual(
      Array.from({ length: 40 }, (_v, i) => [i + 1, 'crm_platform']),
    );
  });

  it('LISTENs on LISTEN_DATABASE_URL and is woken by a NOTIFY sent through PgBouncer', async () => {
    const database = await open();
    const config = loadConfig({ ...TEST_ENV, DATABASE_URL: pooledUrl, LISTEN_DATABASE_URL: directUrl });
    expect(config.listenDatabaseUrl).toBe(directUrl);
    // Polling every hour: only the NOTIFY can wake the worker within this test.
    const task = createWebhookTask({ pollMs: 3_600_000 });
    let wakes = 0;
    let woken: () => void = () => {};
    const stop = await task.start?.({
      config,
      database,
      log: pino({ level: 'silent' }),
      wake: () => {
        wakes++;
        woken();
      },
    });
    try {
      // start() wakes once itself (anything emitted while disconnected): wait for the NOTIFY's own wake.
      const before = wakes;
      const next = new Promise<void>((resolve) => {
        woken = () => wakes > before && resolve();
      });
      // As emit() does: pg_notify in a committed transaction, through PgBouncer.
      await asPlatform(database.db, async (tx) => {
        await tx.execute(sql.raw(`SELECT pg_notify('${WAKE_CHANNEL}', '')`));
      });
      await next;
      expect(wakes).toBeGreaterThan(before);
    } finally {
      await stop?.();
    }
  }, 60_000);
});
