import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Configuration is parsed once, here, from the environment (decisions.md §1).
 * Nothing else in the code base reads process.env: code that needs a setting
 * receives the Config object as an argument.
 */

export type Plan = 'starter' | 'pro' | 'business';
export const PLANS: readonly Plan[] = ['starter', 'pro', 'business'];

export interface Config {
  port: number;
  host: string;
  baseUrl: string;
  databaseUrl: string | undefined;
  /**
   * The schema owner's connection, used only to migrate at start-up. Unset: migrations
   * run on DATABASE_URL (a superuser setup, or a service role that only checks).
   */
  migrationDatabaseUrl: string | undefined;
  /**
   * DATABASE_CONNECT_TIMEOUT: how long a query waits for a PostgreSQL connection (a new
   * one, or a free one in the pool) before it fails, and the request answers 503. Without
   * it a request would hang for as long as the database cannot be reached.
   */
  databaseConnectTimeoutMs: number;
  /**
   * A direct connection for the worker's LISTEN (LISTEN_DATABASE_URL; default DATABASE_URL).
   * Behind PgBouncer in transaction pooling a LISTEN on a pooled connection never hears a
   * NOTIFY (the server connection is handed to another client after each transaction).
   */
  listenDatabaseUrl: string | undefined;
  dataDir: string;
  /**
   * Where bulk exports are written (EXPORT_DIR; default DATA_DIR/exports, or a directory
   * under the temp dir when the database is in memory).
   */
  exportDir: string;
  authSecret: string;
  nodeEnv: string;
  defaultPlan: Plan;
  redisUrl: string | undefined;
  smtpUrl: string | undefined;
  webhookAllowPrivateTargets: boolean;
  /** Delays in milliseconds before attempts 2..n. */
  webhookRetryScheduleMs: number[];
  runWorker: boolean;
  /**
   * WORKER_MEMORY_PROBE=true (the texts bench only): `npm run worker`, started with node
   * --expose-gc and an IPC channel, answers a `memory` message with its memory after a full
   * collection, so the bench can show the live heap beside RSS. No HTTP endpoint, nothing in
   * the API process.
   */
  workerMemoryProbe: boolean;
  rateLimitPerMinute: number;
  /** Extra browser origins allowed to call the API with cookies (comma list). */
  corsOrigins: string[];
  /**
   * Which proxies to believe for the client address (X-Forwarded-For), as Fastify's
   * `trustProxy`: false (default), true, a hop count, or a comma list of addresses/CIDRs.
   * Per-IP rate limits and recorded session IPs depend on it behind a load balancer.
   */
  trustProxy: boolean | number | string[];
  logLevel: string;
  /** Where mail goes when SMTP_URL is unset. */
  mailOutboxFile: string;
  /** The From of every mail sent (MAIL_FROM). */
  mailFrom: string;
  /**
   * Where the Stripe SDK sends its API calls (STRIPE_API_BASE, e.g. `http://127.0.0.1:12111`):
   * unset in production (the SDK's own api.stripe.com); tests point it at a local stand-in.
   */
  stripeApi: { host: string; port: number; protocol: 'http' | 'https' } | undefined;
  /**
   * Where the Twilio SDK sends its API calls (TWILIO_API_BASE, an origin such as
   * `http://127.0.0.1:4010`): unset in production (the SDK's own *.twilio.com hosts); tests
   * point it at a local stand-in. The origin replaces the SDK's, the path is kept.
   */
  twilioApi: string | undefined;
  /**
   * QuickBooks Online (operations.md §11): the app's OAuth keys (QUICKBOOKS_CLIENT_ID and
   * QUICKBOOKS_CLIENT_SECRET; unset: connecting answers 409) and where the calls go:
   * QUICKBOOKS_API_BASE replaces https://quickbooks.api.intuit.com, QUICKBOOKS_OAUTH_BASE the
   * three Intuit OAuth hosts (paths kept), so tests run against local stand-ins.
   */
  quickbooks: {
    clientId: string | undefined;
    clientSecret: string | undefined;
    apiBase: string;
    oauthBase: string | undefined;
  };
}

export class ConfigError extends Error {}

const DEV_SECRET = 'dev-secret-change-me-0123456789abcdef0123456789';

function parseBool(name: string, raw: string | undefined, dflt: boolean): boolean {
  if (raw === undefined || raw === '') return dflt;
  if (/^(true|1|yes)$/i.test(raw)) return true;
  if (/^(false|0|no)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function parseInteger(name: string, raw: string | undefined, dflt: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return dflt;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses a duration such as `500ms`, `30s`, `1m`, `1h`. */
export function parseDuration(text: string): number {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  if (!m) throw new ConfigError(`"${text}" is not a duration like 30s, 1m or 1h`);
  return Number(m[1]) * (UNIT_MS[m[2] as string] as number);
}

function parseTrustProxy(raw: string | undefined): boolean | number | string[] {
  if (raw === undefined || raw.trim() === '' || /^(false|0|no)$/i.test(raw)) return false;
  if (/^(true|yes)$/i.test(raw)) return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const list = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (list.some((s) => !/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(s))) {
    throw new ConfigError(
      `TRUST_PROXY must be true, false, a hop count or a comma list of addresses/CIDRs, got "${raw}"`,
    );
  }
  return list;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const port = parseInteger('PORT', env.PORT, 3000, 0, 65535);
  const nodeEnv = env.NODE_ENV ?? 'development';
  const plan = (env.DEFAULT_PLAN ?? 'business') as Plan;
  if (!PLANS.includes(plan)) throw new ConfigError(`DEFAULT_PLAN must be one of ${PLANS.join(', ')}`);
  let authSecret = env.AUTH_SECRET ?? '';
  if (!authSecret) {
    if (nodeEnv === 'production') throw new ConfigError('AUTH_SECRET is required when NODE_ENV=production');
    authSecret = DEV_SECRET;
  } else if (authSecret.length < 32) {
    throw new ConfigError('AUTH_SECRET must be at least 32 characters');
  }
  const schedule = (env.WEBHOOK_RETRY_SCHEDULE ?? '1m,5m,15m,1h')
    .split(',')
    .filter((s) => s.trim() !== '')
    .map(parseDuration);
  if (schedule.length === 0) throw new ConfigError('WEBHOOK_RETRY_SCHEDULE needs at least one delay');
  const baseUrl = (env.BASE_URL ?? `http://localhost:${port}`).replace(/\/+$/, '');
  try {
    new URL(baseUrl);
  } catch {
    throw new ConfigError(`BASE_URL is not a URL: "${baseUrl}"`);
  }
  const dataDir = env.DATA_DIR ?? './data';
  return {
    port,
    host: env.HOST ?? '127.0.0.1',
    baseUrl,
    databaseUrl: env.DATABASE_URL || undefined,
    migrationDatabaseUrl: env.MIGRATION_DATABASE_URL || undefined,
    databaseConnectTimeoutMs: parseConnectTimeout(env.DATABASE_CONNECT_TIMEOUT),
    listenDatabaseUrl: env.LISTEN_DATABASE_URL || env.DATABASE_URL || undefined,
    dataDir,
    exportDir:
      env.EXPORT_DIR ||
      (dataDir.startsWith('memory://') ? join(tmpdir(), `crm-exports-${process.pid}`) : join(dataDir, 'exports')),
    authSecret,
    nodeEnv,
    defaultPlan: plan,
    redisUrl: env.REDIS_URL || undefined,
    smtpUrl: env.SMTP_URL || undefined,
    webhookAllowPrivateTargets: parseBool('WEBHOOK_ALLOW_PRIVATE_TARGETS', env.WEBHOOK_ALLOW_PRIVATE_TARGETS, false),
    webhookRetryScheduleMs: schedule,
    runWorker: parseBool('RUN_WORKER', env.RUN_WORKER, true),
    workerMemoryProbe: parseBool('WORKER_MEMORY_PROBE', env.WORKER_MEMORY_PROBE, false),
    rateLimitPerMinute: parseInteger('RATE_LIMIT_PER_MINUTE', env.RATE_LIMIT_PER_MINUTE, 600, 1, 10_000_000),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    corsOrigins: (env.CORS_ORIGINS ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    logLevel: env.LOG_LEVEL ?? (nodeEnv === 'test' ? 'silent' : 'info'),
    // Next to the embedded database; with an in-memory database, under the temp dir (nothing left in ./data).
    mailOutboxFile:
      env.MAIL_OUTBOX_FILE ??
      (dataDir.startsWith('memory://') ? join(tmpdir(), `crm-outbox-${process.pid}.log`) : join(dataDir, 'outbox.log')),
    mailFrom: parseMailFrom(env.MAIL_FROM),
    stripeApi: parseStripeApi(env.STRIPE_API_BASE),
    twilioApi: parseTwilioApi(env.TWILIO_API_BASE),
    quickbooks: {
      clientId: env.QUICKBOOKS_CLIENT_ID || undefined,
      clientSecret: env.QUICKBOOKS_CLIENT_SECRET || undefined,
      apiBase: parseOrigin('QUICKBOOKS_API_BASE', env.QUICKBOOKS_API_BASE) ?? 'https://quickbooks.api.intuit.com',
      oauthBase: parseOrigin('QUICKBOOKS_OAUTH_BASE', env.QUICKBOOKS_OAUTH_BASE),
    },
  };
}

function parseConnectTimeout(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return 5_000;
  const ms = parseDuration(raw);
  if (ms < 100 || ms > 600_000)
    throw new ConfigError(`DATABASE_CONNECT_TIMEOUT must be between 100ms and 10m, got "${raw}"`);
  return ms;
}

function parseStripeApi(raw: string | undefined): Config['stripeApi'] {
  if (raw === undefined || raw.trim() === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ConfigError(`STRIPE_API_BASE must be a URL such as https://api.stripe.com, got "${raw}"`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || (url.pathname !== '/' && url.pathname !== '')) {
    throw new ConfigError(`STRIPE_API_BASE must be an http(s) origin without a path, got "${raw}"`);
  }
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return { host: url.hostname, port: url.port ? Number(url.port) : protocol === 'http' ? 80 : 443, protocol };
}

function parseTwilioApi(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ConfigError(`TWILIO_API_BASE must be a URL such as https://api.twilio.com, got "${raw}"`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || (url.pathname !== '/' && url.pathname !== '')) {
    throw new ConfigError(`TWILIO_API_BASE must be an http(s) origin without a path, got "${raw}"`);
  }
  return url.origin;
}

/** An http(s) origin without a path (a stand-in's address), or undefined when unset. */
function parseOrigin(name: string, raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ConfigError(`${name} must be a URL such as http://127.0.0.1:4020, got "${raw}"`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || (url.pathname !== '/' && url.pathname !== '')) {
    throw new ConfigError(`${name} must be an http(s) origin without a path, got "${raw}"`);
  }
  return url.origin;
}

function parseMailFrom(raw: string | undefined): string {
  if (raw === undefined || raw.trim() === '') return 'Service <no-reply@localhost>';
  // An address, alone or as `Name <address>`: nodemailer accepts both.
  if (!/^[^<>@\s]+@[^<>@\s]+$|^[^<>]*<[^<>@\s]+@[^<>@\s]+>$/.test(raw.trim())) {
    throw new ConfigError(`MAIL_FROM must be an email address or "Name <address>", got "${raw}"`);
  }
  return raw.trim();
}

/** A URL without its user and password (for logs). */
function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}

/** What the process runs with, for the start-up log: no secrets, no passwords in URLs. */
export function configSummary(config: Config): Record<string, unknown> {
  return {
    port: config.port,
    host: config.host,
    baseUrl: config.baseUrl,
    database: config.databaseUrl ? withoutCredentials(config.databaseUrl) : `embedded (${config.dataDir})`,
    databaseConnectTimeout: `${config.databaseConnectTimeoutMs / 1000}s`,
    ...(config.listenDatabaseUrl && config.listenDatabaseUrl !== config.databaseUrl
      ? { listenDatabase: withoutCredentials(config.listenDatabaseUrl) }
      : {}),
    redis: config.redisUrl ? withoutCredentials(config.redisUrl) : 'none (per-process rate limits)',
    mail: config.smtpUrl ? withoutCredentials(config.smtpUrl) : `outbox file ${config.mailOutboxFile}`,
    mailFrom: config.mailFrom,
    stripeApi: config.stripeApi
      ? `${config.stripeApi.protocol}://${config.stripeApi.host}:${config.stripeApi.port}`
      : 'api.stripe.com',
    quickbooks: config.quickbooks.clientId
      ? `app ${config.quickbooks.clientId} via ${config.quickbooks.apiBase}`
      : 'not configured',
    defaultPlan: config.defaultPlan,
    runWorker: config.runWorker,
    rateLimitPerMinute: config.rateLimitPerMinute,
    trustProxy: config.trustProxy,
    corsOrigins: config.corsOrigins,
    webhookAllowPrivateTargets: config.webhookAllowPrivateTargets,
    webhookRetrySchedule: config.webhookRetryScheduleMs.map((ms) => `${ms / 1000}s`),
    authSecret: isDevSecret(config) ? 'development secret' : 'set',
    logLevel: config.logLevel,
  };
}

export function isDevSecret(config: Config): boolean {
  return config.authSecret === DEV_SECRET;
}
