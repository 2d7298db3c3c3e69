import { createRequire } from 'node:module';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { RateLimiterDrizzle, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../config.js';
import type { Db } from '../db/client.js';
import { rateLimits } from '../db/schema/index.js';
import { AppError } from './errors.js';

/**
 * Counters live in process memory, or in Redis when REDIS_URL is set so that
 * several API processes share one budget per principal. If Redis is unreachable
 * the in-memory limiter takes over (insurance) rather than failing requests.
 *
 * The sign-in failure limit is a security control, not load shedding: N processes each
 * counting 10 would allow 10 × N guesses. Without Redis it is counted in the database
 * (table `rate_limits`, through the platform connection), which every process shares.
 */
export interface Limiters {
  /** Requests per minute per principal (RATE_LIMIT_PER_MINUTE). */
  requests: RateLimiterMemory | RateLimiterRedis;
  /** Failed sign-ins per email: 10 per 15 minutes (decisions §3), shared by every process. */
  signInFailures: RateLimiterMemory | RateLimiterRedis | RateLimiterDrizzle;
  perMinute: number;
  /**
   * A route's own budget (route config `rateLimit`, or counted by the route itself), made once per
   * bucket name: `points` per `durationSec` (a minute unless said otherwise).
   */
  bucket(name: string, points: number, durationSec?: number): RateLimiterMemory | RateLimiterRedis;
  /**
   * A budget every process shares, whatever the deployment: in Redis when REDIS_URL is set, else
   * in the database (table `rate_limits`, as the sign-in failures), else (no platform connection
   * given) in memory. For limits someone else enforces on all our processes together, such as
   * QuickBooks' 500 requests a minute per company. Made once per name.
   */
  sharedBucket(
    name: string,
    points: number,
    durationSec?: number,
  ): RateLimiterMemory | RateLimiterRedis | RateLimiterDrizzle;
  /** The shared store when REDIS_URL is set (tests wait for it to be ready). */
  redis: Redis | undefined;
  /** For /readyz: `ok`, `unreachable` (counters are per process meanwhile), or `not configured`. */
  redisCheck(): 'ok' | 'unreachable' | 'not configured';
  close(): Promise<void>;
}

export const SIGN_IN_FAILURES = { points: 10, duration: 15 * 60 };

type Log = Pick<FastifyBaseLogger, 'info' | 'error'>;

/**
 * `platformDb`: the platform connection (crm_platform), where the sign-in failures are counted
 * when REDIS_URL is unset; without it (unit tests of the limiters) they stay in memory.
 */
export function createLimiters(config: Config, log?: Log, platformDb?: Db): Limiters {
  // ioredis (CommonJS) is required only when REDIS_URL is set: loading it cost about 0.14 s of CPU at
  // every start of a process that has no Redis (the embedded default among them).
  const redis = config.redisUrl
    ? new (createRequire(import.meta.url)('ioredis') as typeof import('ioredis')).Redis(config.redisUrl, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        lazyConnect: false,
      })
    : undefined;
  // ioredis reconnects by itself and the in-memory insurance limiter covers the gap, but a wrong
  // or unreachable REDIS_URL must not go unnoticed: log each change of state (not every retry).
  let down = false;
  redis?.on('error', (err: Error) => {
    if (down) return;
    down = true;
    log?.error(
      { err: { message: err.message } },
      'REDIS_URL is unreachable: rate limits fall back to per-process counters until it is back (/readyz says degraded)',
    );
  });
  redis?.on('ready', () => {
    if (down) log?.info('Redis reachable again: rate limits are shared again');
    down = false;
  });
  // `blockInMemory`: once Redis refuses a key, this process refuses it from memory until the window Redis
  // named ends (rate-limiter-flexible's inMemoryBlockOnConsumed, no duration: "until msBeforeNext"), so a
  // flood from one principal costs no Redis round trip per request. Redis stays the truth: the window
  // cannot reopen earlier, and other processes learn the same from Redis on their first refused request.
  // Not for the sign-in failures, which are deleted on success.
  const make = (keyPrefix: string, points: number, duration: number, blockInMemory = true) => {
    const memory = new RateLimiterMemory({ keyPrefix, points, duration });
    return redis
      ? new RateLimiterRedis({
          storeClient: redis,
          keyPrefix: `crm:rl:${keyPrefix}`,
          points,
          duration,
          insuranceLimiter: memory,
          ...(blockInMemory ? { inMemoryBlockOnConsumed: points + 1 } : {}),
        })
      : memory;
  };
  const buckets = new Map<string, RateLimiterMemory | RateLimiterRedis>();
  const sharedBuckets = new Map<string, RateLimiterMemory | RateLimiterRedis | RateLimiterDrizzle>();
  // In the database: a store that does not answer falls back to this process's own count (as in Redis).
  const inDatabase = (db: Db, keyPrefix: string, points: number, duration: number) =>
    new RateLimiterDrizzle({
      storeClient: db,
      schema: rateLimits,
      keyPrefix,
      points,
      duration,
      insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration }),
    });
  return {
    requests: make('req', config.rateLimitPerMinute, 60),
    bucket: (name, points, durationSec = 60) => {
      let limiter = buckets.get(name);
      if (!limiter) {
        limiter = make(`route:${name}`, points, durationSec);
        buckets.set(name, limiter);
      }
      return limiter;
    },
    sharedBucket: (name, points, durationSec = 60) => {
      let limiter = sharedBuckets.get(name);
      if (!limiter) {
        // No in-memory blocking: a budget shared with other processes must see their refunds
        // and blocks (`block` for a pause) as they happen.
        limiter =
          redis || !platformDb
            ? make(`shared:${name}`, points, durationSec, false)
            : inDatabase(platformDb, `shared:${name}`, points, durationSec);
        sharedBuckets.set(name, limiter);
      }
      return limiter;
    },
    signInFailures:
      redis || !platformDb
        ? make('signin', SIGN_IN_FAILURES.points, SIGN_IN_FAILURES.duration, false)
        : // A database that does not answer must not open the door wider than one process's count.
          inDatabase(platformDb, 'signin', SIGN_IN_FAILURES.points, SIGN_IN_FAILURES.duration),
    perMinute: config.rateLimitPerMinute,
    redis,
    redisCheck: () => (redis ? (redis.status === 'ready' ? 'ok' : 'unreachable') : 'not configured'),
    close: async () => {
      if (redis) await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/** IETF RateLimit headers (draft-ietf-httpapi-ratelimit-headers): policy and current state. */
export function rateLimitHeaders(quota: number, windowSec: number, res: RateLimiterRes): Record<string, string> {
  const reset = Math.max(0, Math.ceil(res.msBeforeNext / 1000));
  return {
    'RateLimit-Policy': `"default";q=${quota};w=${windowSec}`,
    RateLimit: `"default";r=${Math.max(0, res.remainingPoints)};t=${reset}`,
  };
}

/**
 * A tighter budget of its own for one route (route config `rateLimit`), on top of the
 * caller's general one: e.g. a public route whose every call reaches a paid API.
 */
export interface RouteRateLimit {
  bucket: string;
  perMinute: number;
  /** What is counted; the caller's IP when omitted. */
  key?: (request: FastifyRequest) => string;
}

/** A budget of its own: `points` per `durationSec` (a minute when omitted), counted in the bucket `name`. */
export interface Budget {
  name: string;
  points: number;
  durationSec?: number;
}

/** A route's `rateLimit` config as the budget it counts in. */
export const routeBudget = (route: RouteRateLimit): Budget => ({ name: route.bucket, points: route.perMinute });

/** What counting one point said: let through (with the RateLimit headers), or refused (with Retry-After too). */
export type Counted =
  | { allowed: true; headers: Record<string, string> }
  | { allowed: false; headers: Record<string, string> };

/**
 * Consumes one point for `key`, as `consumeRequest`, but answers a refusal instead of throwing it: a
 * route refusing a flood sends its 429 itself, without an error built (a stack captured) and sent
 * through the error handler for each refused request. A store failure without insurance lets the
 * request through (no 500s from an outage).
 */
export async function countRequest(limiters: Limiters, key: string, budget?: Budget): Promise<Counted> {
  const quota = budget?.points ?? limiters.perMinute;
  const windowSec = budget?.durationSec ?? 60;
  try {
    const res = await (budget ? limiters.bucket(budget.name, budget.points, windowSec) : limiters.requests).consume(
      key,
    );
    return { allowed: true, headers: rateLimitHeaders(quota, windowSec, res) };
  } catch (rej) {
    if (rej instanceof RateLimiterRes) return { allowed: false, headers: refusalHeaders(quota, windowSec, rej) };
    return { allowed: true, headers: {} };
  }
}

/**
 * Consumes one point for `key`: of the caller's general budget (RATE_LIMIT_PER_MINUTE a minute),
 * or of `budget` when given (a route's own, or one a route counts itself, e.g. once it knows the
 * organization). Returns the RateLimit headers; over the budget, throws 429 RATE_LIMITED with
 * Retry-After. A store failure without insurance lets the request through (no 500s from an outage).
 */
export async function consumeRequest(
  limiters: Limiters,
  key: string,
  budget?: Budget,
): Promise<Record<string, string>> {
  const counted = await countRequest(limiters, key, budget);
  if (!counted.allowed) throw rateLimitedError(counted.headers);
  return counted.headers;
}

/** RateLimit headers and Retry-After (whole seconds, at least 1) for a refused point. */
function refusalHeaders(quota: number, windowSec: number, res: RateLimiterRes): Record<string, string> {
  const headers = rateLimitHeaders(quota, windowSec, res);
  headers['Retry-After'] = String(Math.max(1, Math.ceil(res.msBeforeNext / 1000)));
  return headers;
}

export const RATE_LIMITED_MESSAGE = 'Too many requests; retry after the number of seconds in Retry-After';

/**
 * The 429 error. Built without a stack trace: a flood builds thousands a second, capturing a stack
 * was a measurable share of a refusal's cost (bench public-requests), and a refusal's stack says nothing.
 */
function rateLimitedError(headers: Record<string, string>): AppError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new AppError('RATE_LIMITED', RATE_LIMITED_MESSAGE, { headers });
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** The 429 for a refused point: RateLimit headers and Retry-After (whole seconds, at least 1). */
export function rateLimited(quota: number, windowSec: number, res: RateLimiterRes): AppError {
  return rateLimitedError(refusalHeaders(quota, windowSec, res));
}
