import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { rateLimits } from '../../src/db/schema/index.js';
import { apiKeyCaller, createHarness, type Harness, newTenant, TEST_ENV, type TestUser } from '../harness.js';
import { REDIS_URL, redisReachable } from './redis.js';

describe('rate limiting per principal (in memory)', () => {
  let h: Harness;
  let owner: TestUser;
  beforeAll(async () => {
    // Set up with a generous budget, then rebuild the app on the same database with 5 per minute.
    h = await createHarness();
    owner = await newTenant(h);
  });
  afterAll(async () => h?.close());

  it('sends RateLimit-Policy and RateLimit, and 429 RATE_LIMITED with Retry-After once spent', async () => {
    const app = await buildApp(loadConfig({ ...TEST_ENV, RATE_LIMIT_PER_MINUTE: '5' }), h.database);
    try {
      const get = (headers: Record<string, string>) => app.inject({ method: 'GET', url: '/api/members', headers });
      for (let i = 0; i < 5; i++) {
        const res = await get({ cookie: owner.cookie });
        expect(res.statusCode).toBe(200);
        expect(res.headers['ratelimit-policy']).toBe('"default";q=5;w=60');
        expect(res.headers.ratelimit).toMatch(new RegExp(`^"default";r=${4 - i};t=\\d+$`));
      }
      const limited = await get({ cookie: owner.cookie });
      expect(limited.statusCode).toBe(429);
      expect(limited.json().error.code).toBe('RATE_LIMITED');
      const retryAfter = Number(limited.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(limited.headers.ratelimit).toMatch(/^"default";r=0;t=\d+$/);

      // Another principal (an API key of the same organization) has its own budget.
      const key = await apiKeyCaller(h, owner);
      expect((await get({ authorization: `Bearer ${key.key}` })).statusCode).toBe(200);
      // Unauthenticated calls are counted per IP, failed authentication included.
      const results = [];
      for (let i = 0; i < 6; i++) results.push((await get({ authorization: 'Bearer sk_wrong' })).statusCode);
      expect(results).toEqual([401, 401, 401, 401, 401, 429]);
    } finally {
      await app.close();
    }
  });
});

// Redis is part of the CI machine; on a laptop without it this block is reported as skipped.
const hasRedis = await redisReachable();

describe.skipIf(!hasRedis)('rate limiting shared through Redis (REDIS_URL)', () => {
  let h: Harness;
  let owner: TestUser;
  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
  });
  afterAll(async () => h?.close());

  it('gives two API processes sharing one Redis one budget per principal', async () => {
    const config = loadConfig({ ...TEST_ENV, RATE_LIMIT_PER_MINUTE: '5', REDIS_URL });
    const apps = [await buildApp(config, h.database), await buildApp(config, h.database)];
    try {
      for (const app of apps) {
        const redis = app.deps.limiters.redis;
        expect(redis).toBeDefined();
        if (redis && redis.status !== 'ready') await once(redis, 'ready');
      }
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await apps[i % 2]?.inject({
          method: 'GET',
          url: '/api/members',
          headers: { cookie: owner.cookie },
        });
        statuses.push(res?.statusCode ?? 0);
        if (i < 5) expect(res?.headers.ratelimit).toMatch(new RegExp(`^"default";r=${4 - i};`));
      }
      // Alone, each process would have allowed 5; together they allowed 5.
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    } finally {
      for (const app of apps) await app.close();
    }
  });
});

describe('per-IP limits behind a proxy (TRUST_PROXY)', () => {
  const hit = (h: Harness, forwardedFor: string) =>
    h.app.inject({ method: 'GET', url: '/api/members', headers: { 'x-forwarded-for': forwardedFor } });

  it('counts each forwarded client separately only when the proxy is trusted', async () => {
    const trusted = await createHarness({ RATE_LIMIT_PER_MINUTE: '2', TRUST_PROXY: 'true' });
    const untrusted = await createHarness({ RATE_LIMIT_PER_MINUTE: '2' });
    try {
      // Unauthenticated calls count against the client address: 2 each, then 429.
      for (const ip of ['203.0.113.1', '203.0.113.2']) {
        expect((await hit(trusted, ip)).statusCode).toBe(401);
        expect((await hit(trusted, ip)).statusCode).toBe(401);
      }
      expect((await hit(trusted, '203.0.113.1')).statusCode).toBe(429);
      // Without TRUST_PROXY the header is ignored: every call is the same (proxy) address.
      expect((await hit(untrusted, '203.0.113.1')).statusCode).toBe(401);
      expect((await hit(untrusted, '203.0.113.2')).statusCode).toBe(401);
      expect((await hit(untrusted, '203.0.113.3')).statusCode).toBe(429);
    } finally {
      await trusted.close();
      await untrusted.close();
    }
  });
});

describe('sign-in failures counted in the database without Redis (issue 29)', () => {
  let h: Harness;
  let owner: TestUser;
  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
  });
  afterAll(async () => h?.close());

  it('gives two API processes on one database one budget of 10 failures per email', async () => {
    // Two apps, each with its own in-memory limiters, as two processes have: only the
    // database is shared.
    const config = loadConfig({ ...TEST_ENV });
    expect(config.redisUrl).toBeUndefined();
    const apps = [await buildApp(config, h.database), await buildApp(config, h.database)];
    try {
      const signIn = (i: number, password: string) =>
        apps[i % 2]?.inject({
          method: 'POST',
          url: '/api/auth/sign-in/email',
          payload: { email: owner.email.toUpperCase(), password },
        });
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) statuses.push((await signIn(i, 'wrong password 123'))?.statusCode ?? 0);
      expect(statuses).toEqual(Array(10).fill(401));
      // Per process, each would have seen 5 failures and let the 11th try through.
      for (const i of [0, 1]) {
        const blocked = await signIn(i, 'wrong password 123');
        expect(blocked?.statusCode).toBe(429);
        expect(blocked?.json().error.code).toBe('RATE_LIMITED');
        expect(Number(blocked?.headers['retry-after'])).toBeGreaterThan(0);
      }
      // The right password is refused too while the window lasts.
      expect((await signIn(0, 'correct horse battery'))?.statusCode).toBe(429);
      // Counted once per email, in the platform-only table.
      const rows = await h.admin.db.select().from(rateLimits);
      expect(rows.filter((r) => r.key === `signin:${owner.email.toLowerCase()}`)).toMatchObject([{ points: 10 }]);
    } finally {
      for (const app of apps) await app.close();
    }
  });
});
