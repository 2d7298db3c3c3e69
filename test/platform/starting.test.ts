import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DataDirLockedError, lockDataDir } from '../../src/db/data-dir-lock.js';
import { startingServer } from '../../src/platform/starting.js';

describe('the start-up server (issue 29 item 3)', () => {
  it('answers healthz 200, readyz 503 with the step, other routes 503 + Retry-After, then hands over', async () => {
    const starting = startingServer();
    await new Promise<void>((resolve) => starting.server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(starting.server.address() as AddressInfo).port}`;
    try {
      starting.step('applying database migrations');
      const health = await fetch(`${base}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({ status: 'starting', waitingFor: 'applying database migrations' });
      const api = await fetch(`${base}/api/customers`, { method: 'POST', body: '{"firstName":"Ann"}' });
      expect(api.status).toBe(503);
      expect(api.headers.get('retry-after')).toBe('2');
      const body = await api.json();
      expect(body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
      expect(body.error.message).toContain('applying database migrations');
      expect(api.headers.get('x-request-id')).toBe(body.error.requestId);

      starting.handOver((_req, res) => res.writeHead(204).end());
      expect((await fetch(`${base}/readyz`)).status).toBe(204);
    } finally {
      await new Promise((resolve) => starting.server.close(resolve));
    }
  });
});

describe('one process per embedded data directory (issue 29 item 4)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'crm-lock-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a second holder, naming the first and what to do; free again once released', async () => {
    const first = await lockDataDir(dir);
    const refused = await lockDataDir(dir).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(DataDirLockedError);
    expect((refused as Error).message).toContain(`in use by process ${process.pid}`);
    expect((refused as Error).message).toMatch(/stop that process first .*kill -TERM \d+.*DATABASE_URL/);
    first.release();
    await new Promise((r) => setTimeout(r, 50));
    const again = await lockDataDir(dir);
    again.release();
  });

  it('takes over the lock of a process that was killed (kill -9 leaves the socket file)', async () => {
    // A child takes the lock and is killed without a chance to close it.
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `import('./src/db/data-dir-lock.ts').then(async (m) => { await m.lockDataDir(${JSON.stringify(dir)}); console.log('locked'); setInterval(() => {}, 1000); })`,
      ],
      { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (d) => String(d).includes('locked') && resolve());
      child.once('exit', () => reject(new Error('child exited before locking')));
    });
    expect(await lockDataDir(dir).catch((err: unknown) => err)).toBeInstanceOf(DataDirLockedError);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const lock = await lockDataDir(dir);
    lock.release();
  }, 60_000);
});
