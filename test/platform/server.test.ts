import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { withDatabase } from '../global-setup.js';
import { createHarness } from '../harness.js';

/**
 * The real entry points (`npm start`, `npm run admin`) as child processes: start,
 * SIGTERM, data kept across restarts, the set-plan command. On the embedded database
 * by default, on a fresh PostgreSQL database when the suite runs on PostgreSQL.
 */

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Every child started here; any still alive when the file ends (a failed test) is killed. */
const children = new Set<ChildProcess>();

function run(script: string, args: string[], env: Record<string, string>): Run {
  // node itself, as the npm scripts start it: the tsx CLI relays a signal and, when the child
  // does not acknowledge it within 30 ms (a busy machine), kills it (exit 143).
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: process.cwd(),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => {
    out += String(d);
  });
  child.stderr?.on('data', (d) => {
    out += String(d);
  });
  children.add(child);
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  return { child, output: () => out, exited };
}

async function startServer(env: Record<string, string>): Promise<{ run: Run; base: string }> {
  const r = run('src/server.ts', [], env);
  // No deadline of its own: a first start runs initdb for the embedded database, which is slow on a
  // busy machine; the test's timeout bounds the wait.
  for (;;) {
    const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(r.output());
    if (m) return { run: r, base: m[1] as string };
    if (r.child.exitCode !== null) {
      throw new Error(`server did not start:\n${r.output()}`);
    }
    await new Promise((res) => setTimeout(res, 50));
  }
}

async function stop(r: Run): Promise<number | null> {
  r.child.kill('SIGTERM');
  return r.exited;
}

describe('npm start / npm run admin as processes', () => {
  let dir: string;
  const env: Record<string, string> = {};
  let dropDatabase: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'crm-e2e-'));
    Object.assign(env, {
      NODE_ENV: 'development',
      PORT: '0',
      LOG_LEVEL: 'info',
      DATA_DIR: join(dir, 'data'),
      MAIL_OUTBOX_FILE: join(dir, 'outbox.log'),
      RUN_WORKER: 'true',
    });
    const info = inject('database');
    if (info.kind === 'postgres') {
      const name = `${info.prefix}_e2e_${process.pid}`;
      const admin = new pg.Client({ connectionString: info.url });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`); // empty: the server migrates it itself
      await admin.end();
      env.DATABASE_URL = withDatabase(info.url, name);
      dropDatabase = async () => {
        const c = new pg.Client({ connectionString: info.url });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.end();
      };
    }
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await dropDatabase?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it('migrates, serves, stops cleanly on SIGTERM, keeps data, and applies set-plan', async () => {
    const email = `e2e-${Date.now()}@example.com`;
    const password = 'correct horse battery';
    const json = { 'content-type': 'application/json' };

    const first = await startServer(env);
    const ready = await fetch(`${first.base}/readyz`);
    expect(ready.status).toBe(200);
    const up = await fetch(`${first.base}/api/auth/sign-up/email`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ name: 'E2E', email, password }),
    });
    expect(up.status).toBe(200);
    const cookie = up.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const org = await fetch(`${first.base}/api/organizations`, {
      method: 'POST',
      headers: { ...json, cookie },
      body: JSON.stringify({ name: 'Persisted Lawn' }),
    });
    expect(org.status).toBe(201);
    const orgId = (await org.json()).data.id as string;
    expect(await stop(first.run)).toBe(0);
    expect(first.run.output()).toMatch(/shutting down/);

    // Operator command against the same database while the API is down.
    const setPlan = run('src/admin.ts', ['set-plan', orgId, 'pro'], env);
    expect(await setPlan.exited, setPlan.output()).toBe(0);
    expect(setPlan.output()).toContain('pro plan');

    const second = await startServer(env);
    try {
      const signIn = await fetch(`${second.base}/api/auth/sign-in/email`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ email, password }),
      });
      expect(signIn.status).toBe(200);
      const cookie2 = signIn.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ');
      const orgs = await (await fetch(`${second.base}/api/organizations`, { headers: { cookie: cookie2 } })).json();
      expect(orgs.data).toMatchObject([{ id: orgId, name: 'Persisted Lawn', plan: 'pro' }]);
      // The old session survived the restart too (sessions live in the database).
      const keys = await fetch(`${second.base}/api/api-keys`, { headers: { cookie } });
      expect(keys.status).toBe(403);
      expect((await keys.json()).error.code).toBe('PLAN_REQUIRED');
    } finally {
      expect(await stop(second.run)).toBe(0);
    }
    // Three process start-ups (tsx compiles the project each time): slow on a busy machine, never a timing assertion.
  }, 300_000);
});

describe('graceful shutdown', () => {
  it('finishes an in-flight request and refuses new connections while closing', async () => {
    let entered: () => void = () => {};
    let release: () => void = () => {};
    const inHandler = new Promise<void>((r) => {
      entered = r;
    });
    const h = await createHarness(
      {},
      {
        extraRoutes: (app) => {
          app.get('/slow', { config: { access: 'public' } }, async () => {
            entered();
            await new Promise<void>((r) => {
              release = r;
            });
            return { status: 'done' };
          });
        },
      },
    );
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
    const pending = fetch(`${base}/slow`);
    await inHandler;
    const closing = h.app.close();
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
    release();
    const res = await pending;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'done' });
    await closing;
    await h.database.close();
  });
});
