import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness } from '../harness.js';
import { processEnvironment, run, startServer, stop } from './processes.js';

/**
 * The real entry points (`npm start`, `npm run admin`) as child processes: start,
 * SIGTERM, data kept across restarts, the set-plan command. On the embedded database
 * by default, on a fresh PostgreSQL database when the suite runs on PostgreSQL.
 */

describe('npm start / npm run admin as processes', () => {
  let env: Record<string, string> = {};
  let cleanup: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ env, cleanup } = await processEnvironment('e2e', { empty: true }));
  });
  afterAll(async () => cleanup?.());

  it('migrates, serves, stops cleanly on SIGTERM, keeps data, and applies set-plan', async () => {
    const email = `e2e-${Date.now()}@example.com`;
    const password = 'correct horse battery';
    const json = { 'content-type': 'application/json' };

    const first = await startServer(env);
    const ready = await fetch(`${first.base}/readyz`);
    expect(ready.status).toBe(200);
    // The ready line names the console and how to stop (issue 29 item 3).
    expect(first.run.output()).toMatch(/Console: http:\/\/\S+\/app\. Stop: Ctrl-C, or kill -TERM \d+/);
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
    if (!env.DATABASE_URL) {
      // Issue 29 item 4: the embedded database allows one process; admin beside the API refuses.
      const beside = run('src/admin.ts', ['set-plan', orgId, 'pro'], env);
      expect(await beside.exited, beside.output()).toBe(1);
      expect(beside.output()).toMatch(/in use by process \d+ .*stop that process first/s);
      expect((await fetch(`${first.base}/api/organizations`, { headers: { cookie } })).status).toBe(200);
    }
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
  }, 120_000); // builds an app of its own inside the test: slow on a busy machine
});
