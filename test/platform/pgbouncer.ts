import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/**
 * Debian's PgBouncer (`apt-get install pgbouncer`) in front of the test cluster, in
 * transaction pooling as most managed PostgreSQL is served, dropping the `options` startup
 * parameter as it does (a `-c role=` there is lost). For the tests that run the README's
 * "Scaling out" deployment through it; they are skipped where it is not installed.
 */
export const hasPgbouncer = spawnSync('sh', ['-c', 'command -v pgbouncer || test -x /usr/sbin/pgbouncer']).status === 0;
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

export interface Bouncer {
  /** `url` with its host and port replaced by PgBouncer's. */
  through(url: string): string;
  stop(): Promise<void>;
}

/**
 * Starts PgBouncer in front of the server of `directUrl` for the login roles `users` (trust,
 * as the test cluster), and waits until it answers.
 */
export async function startPgBouncer(directUrl: string, users: string[]): Promise<Bouncer> {
  const direct = new URL(directUrl);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'crm-pgbouncer-'));
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, 'users.txt'), users.map((u) => `"${u}" ""\n`).join(''));
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
      'default_pool_size = 8',
      'ignore_startup_parameters = extra_float_digits,options',
      'unix_socket_dir =',
      '',
    ].join('\n'),
  );
  // PgBouncer refuses to run as root: as the cluster's own user then.
  const asRoot = process.getuid?.() === 0;
  const bouncer: ChildProcess = spawn(
    asRoot ? 'runuser' : PGBOUNCER,
    asRoot ? ['-u', 'postgres', '--', PGBOUNCER, join(dir, 'pgbouncer.ini')] : [join(dir, 'pgbouncer.ini')],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const through = (url: string) => {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(port);
    return u.toString();
  };
  const stop = async () => {
    if (bouncer.exitCode === null) {
      const exited = new Promise((resolve) => bouncer.once('exit', resolve));
      bouncer.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // Wait until PgBouncer answers (the test's timeout bounds the wait).
  for (;;) {
    const probe = new URL(through(directUrl));
    probe.username = users[0] as string;
    const c = new pg.Client({ connectionString: probe.toString() });
    try {
      await c.connect();
      await c.query('SELECT 1');
      await c.end();
      break;
    } catch {
      await c.end().catch(() => {});
      if (bouncer.exitCode !== null) {
        await stop();
        throw new Error('pgbouncer exited');
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { through, stop };
}
