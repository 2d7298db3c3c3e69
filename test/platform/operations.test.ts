import { once } from 'node:events';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { configSummary, loadConfig } from '../../src/config.js';
import { migrate } from '../../src/db/migrate.js';
import { createMailer } from '../../src/platform/mail.js';
import { createHarness, createTestDatabase } from '../harness.js';

describe('Operations', () => {
  it('sends mail From MAIL_FROM (default unchanged) and keeps the memory:// outbox out of ./data', async () => {
    expect(loadConfig({}).mailFrom).toBe('Service <no-reply@localhost>');
    const memory = loadConfig({ DATA_DIR: 'memory://' });
    expect(memory.mailOutboxFile.startsWith(tmpdir())).toBe(true);
    expect(() => loadConfig({ MAIL_FROM: 'not an address' })).toThrow(/MAIL_FROM/);
    const file = join(tmpdir(), `crm-mailfrom-${process.pid}-${Date.now()}.log`);
    const config = loadConfig({ MAIL_FROM: 'Acme Lawn <office@acme.example>', MAIL_OUTBOX_FILE: file });
    const mailer = createMailer(config);
    try {
      await mailer.send({ to: ['dana@example.com'], subject: 'Hi', text: 'Hello' });
      expect(JSON.parse(readFileSync(file, 'utf8').trim()).from).toBe('Acme Lawn <office@acme.example>');
    } finally {
      mailer.close();
      rmSync(file, { force: true });
    }
  });

  it('summarises the configuration for the start-up log without secrets', () => {
    const secret = 'a-very-secret-value-0123456789-abcdefgh';
    const summary = JSON.stringify(
      configSummary(
        loadConfig({
          AUTH_SECRET: secret,
          DATABASE_URL: 'postgres://crm:dbpassword@db:5432/crm',
          REDIS_URL: 'redis://:redispassword@cache:6379',
          SMTP_URL: 'smtp://mailer:smtppassword@mail:587',
        }),
      ),
    );
    for (const hidden of [secret, 'dbpassword', 'redispassword', 'smtppassword']) expect(summary).not.toContain(hidden);
    expect(summary).toContain('db:5432');
    expect(summary).toContain('cache:6379');
  });

  it('logs what migrate applied (nothing on an up-to-date database)', async () => {
    const database = await createTestDatabase();
    const lines: string[] = [];
    try {
      const report = await migrate(database, { info: (_obj, msg) => lines.push(msg) });
      expect(report).toEqual({ applied: [], statements: [] });
      expect(lines).toEqual([expect.stringMatching(/^database up to date \(\d+ migrations\)$/)]);
    } finally {
      await database.close();
    }
  });

  it('logs an unreachable REDIS_URL loudly and /readyz answers 200 degraded', async () => {
    const logs = new PassThrough();
    let text = '';
    logs.on('data', (chunk) => {
      text += chunk.toString();
    });
    // Port 1 on loopback refuses connections at once.
    const h = await createHarness({ REDIS_URL: 'redis://127.0.0.1:1', LOG_LEVEL: 'info' }, { logStream: logs });
    try {
      const redis = h.app.deps.limiters.redis;
      if (!redis) throw new Error('no redis client');
      if (!text.includes('REDIS_URL is unreachable')) await once(redis, 'error');
      expect(text).toContain('REDIS_URL is unreachable');
      const ready = await h.app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toMatchObject({ status: 'degraded', checks: { database: 'ok', redis: 'unreachable' } });
      // The API itself keeps working on per-process counters.
      expect((await h.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await h.close();
    }
  });

  it('/readyz says ready with its checks when nothing is missing', async () => {
    const h = await createHarness();
    try {
      const ready = await h.app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.json()).toMatchObject({ status: 'ready', checks: { database: 'ok', redis: 'not configured' } });
    } finally {
      await h.close();
    }
  });
});
