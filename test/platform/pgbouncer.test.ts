import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type Database, openDatabase } from '../../src/db/client.js';
import { createWebhookTask } from '../../src/delivery/delivery.task.js';
import { WAKE_CHANNEL } from '../../src/platform/events/outbox.js';
import { TEST_ENV } from '../harness.js';

/**
 * Issue 29 item 5: behind PgBouncer in transaction pooling, a LISTEN made through PgBouncer never
 * hears a NOTIFY (the server connection goes back to the pool after each transaction). The
 * worker's LISTEN takes LISTEN_DATABASE_URL, a direct connection, while everything else goes
 * through PgBouncer. Runs on PostgreSQL when Debian's `pgbouncer` is installed
 * (`apt-get install pgbouncer`); reported as skipped otherwise.
 */
const info = inject('database');
const hasPgbouncer = spawnSync('sh', ['-c', 'command -v pgbouncer || test -x /usr/sbin/pgbouncer']).status === 0;
const PGBOUNCER = spawnSync('sh', ['-c', 'command -v pgbouncer || echo /usr/sbin/pgbouncer'], { encoding: 'utf8' })
  .stdout.trim()
  .split('\n')[0] as string;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

describe.skipIf(info.kind !== 'postgres' || !hasPgbouncer)('the worker behind PgBouncer (transaction pooling)', () => {
  let dir: string;
  let bouncer: ChildProcess | undefined;
  let pooledUrl = '';
  let directUrl = '';
  let database: Database | undefined;

  beforeAll(async () => {
    if (info.kind !== 'postgres') return;
    directUrl = info.url;
    const direct = new URL(info.url);
    const port = await freePort();
    dir = mkdtempSync(join(tmpdir(), 'crm-pgbouncer-'));
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'users.txt'), `"${decodeURIComponent(direct.username)}" ""\n`);
    writeFileSync(
      join(dir, 'pgbouncer.ini'),
      [
        '[databases]',
        `* = host=${direct.hostname} port=${direct.port || 5432}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        'auth_type = trust',
        `auth_file = ${join(dir, 'users.txt')}`,
        'pool_mode = transaction',
        'ignore_startup_parameters = extra_float_digits,options',
        'unix_socket_dir =',
        '',
      ].join('\n'),
    );
    // PgBouncer refuses to run as root: as the cluster's own user then.
    const asRoot = process.getuid?.() === 0;
    bouncer = spawn(
      asRoot ? 'runuser' : PGBOUNCER,
      asRoot ? ['-u', 'postgres', '--', PGBOUNCER, join(dir, 'pgbouncer.ini')] : [join(dir, 'pgbouncer.ini')],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const pooled = new URL(info.url);
    pooled.hostname = '127.0.0.1';
    pooled.port = String(port);
    pooledUrl = pooled.toString();
    // Wait until PgBouncer answers (the test's timeout bounds the wait).
    for (;;) {
      const c = new pg.Client({ connectionString: pooledUrl });
      try {
        await c.connect();
        await c.query('SELECT 1');
        await c.end();
        break;
      } catch {
        await c.end().catch(() => {});
        if (bouncer.exitCode !== null) throw new Error('pgbouncer exited');
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    database = await openDatabase({ databaseUrl: pooledUrl, poolMax: 2 });
  }, 60_000);

  afterAll(async () => {
    await database?.close();
    bouncer?.kill('SIGTERM');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('LISTENs on LISTEN_DATABASE_URL and is woken by a NOTIFY sent through PgBouncer', async () => {
    if (!database) throw new Error('no database');
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
      await database.db.transaction(async (tx) => {
        await tx.execute(`SELECT pg_notify('${WAKE_CHANNEL}', '')`);
      });
      await next;
      expect(wakes).toBeGreaterThan(before);
    } finally {
      await stop?.();
    }
  }, 60_000);
});
