import { describe, expect, it } from 'vitest';
import { ConfigError, configSummary, isDevSecret, loadConfig, parseDuration } from '../../src/config.js';

describe('configuration (decisions §1)', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      baseUrl: 'http://localhost:3000',
      databaseUrl: undefined,
      dataDir: './data',
      defaultPlan: 'business',
      redisUrl: undefined,
      smtpUrl: undefined,
      webhookAllowPrivateTargets: false,
      webhookRetryScheduleMs: [60_000, 300_000, 900_000, 3_600_000],
      runWorker: true,
      workerMemoryProbe: false,
      rateLimitPerMinute: 600,
      corsOrigins: [],
      mailOutboxFile: 'data/outbox.log',
      mailFrom: 'Service <no-reply@localhost>',
    });
    expect(isDevSecret(c)).toBe(true);
  });

  it('LISTEN_DATABASE_URL: the worker LISTENs on DATABASE_URL unless told of a direct connection (PgBouncer)', () => {
    expect(loadConfig({}).listenDatabaseUrl).toBeUndefined();
    expect(loadConfig({ DATABASE_URL: 'postgres://u@pgbouncer:6432/crm' }).listenDatabaseUrl).toBe(
      'postgres://u@pgbouncer:6432/crm',
    );
    const c = loadConfig({
      DATABASE_URL: 'postgres://u@pgbouncer:6432/crm',
      LISTEN_DATABASE_URL: 'postgres://u@db/crm',
    });
    expect(c.listenDatabaseUrl).toBe('postgres://u@db/crm');
    expect(configSummary(c)).toMatchObject({ listenDatabase: 'postgres://db/crm' });
  });

  it('reads every variable', () => {
    const c = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      BASE_URL: 'https://crm.example.com/',
      DATABASE_URL: 'postgres://u@db/crm',
      DATA_DIR: '/var/lib/crm',
      AUTH_SECRET: 's'.repeat(40),
      DEFAULT_PLAN: 'starter',
      REDIS_URL: 'redis://cache:6379',
      SMTP_URL: 'smtp://mail:25',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '10s, 30s',
      RUN_WORKER: 'false',
      WORKER_MEMORY_PROBE: 'true',
      RATE_LIMIT_PER_MINUTE: '120',
      CORS_ORIGINS: 'https://office.example, https://app.example',
      LOG_LEVEL: 'debug',
    });
    expect(c).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      baseUrl: 'https://crm.example.com',
      databaseUrl: 'postgres://u@db/crm',
      dataDir: '/var/lib/crm',
      defaultPlan: 'starter',
      redisUrl: 'redis://cache:6379',
      smtpUrl: 'smtp://mail:25',
      webhookAllowPrivateTargets: true,
      webhookRetryScheduleMs: [10_000, 30_000],
      runWorker: false,
      workerMemoryProbe: true,
      rateLimitPerMinute: 120,
      corsOrigins: ['https://office.example', 'https://app.example'],
      logLevel: 'debug',
      mailOutboxFile: '/var/lib/crm/outbox.log',
    });
    expect(isDevSecret(c)).toBe(false);
  });

  it('refuses bad values with a message naming the variable', () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ PORT: 'eighty' }, /PORT/],
      [{ PORT: '70000' }, /PORT/],
      [{ DEFAULT_PLAN: 'gold' }, /DEFAULT_PLAN/],
      [{ NODE_ENV: 'production' }, /AUTH_SECRET is required/],
      [{ AUTH_SECRET: 'short' }, /AUTH_SECRET/],
      [{ RUN_WORKER: 'maybe' }, /RUN_WORKER/],
      [{ WORKER_MEMORY_PROBE: 'perhaps' }, /WORKER_MEMORY_PROBE/],
      [{ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sure' }, /WEBHOOK_ALLOW_PRIVATE_TARGETS/],
      [{ WEBHOOK_RETRY_SCHEDULE: '1m,soon' }, /soon/],
      [{ WEBHOOK_RETRY_SCHEDULE: ',' }, /WEBHOOK_RETRY_SCHEDULE/],
      [{ RATE_LIMIT_PER_MINUTE: '0' }, /RATE_LIMIT_PER_MINUTE/],
      [{ RATE_LIMIT_PER_MINUTE: '1.5' }, /RATE_LIMIT_PER_MINUTE/],
      [{ BASE_URL: 'not a url' }, /BASE_URL/],
    ];
    for (const [env, message] of cases) {
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(ConfigError);
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(message);
    }
  });

  it('reads TRUST_PROXY as false, true, a hop count or a list of addresses', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, ::1' }).trustProxy).toEqual(['10.0.0.0/8', '::1']);
    expect(() => loadConfig({ TRUST_PROXY: 'everyone' })).toThrow(/TRUST_PROXY/);
  });

  it('parses durations', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(() => parseDuration('1 minute')).toThrow(ConfigError);
  });
});
