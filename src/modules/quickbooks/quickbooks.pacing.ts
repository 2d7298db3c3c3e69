/*
 * Intuit's limits per realm (company), kept across every worker process (operations.md §11):
 *
 * - 500 requests a minute: one point per request in a budget every process shares
 *   (`platform/rate-limit.ts` `sharedBucket`: Redis when REDIS_URL is set, else the database),
 *   a fixed window per realm; a 429 blocks the realm's budget for its Retry-After, so every
 *   process waits it out, not only the one that was told.
 * - 10 at once: each job sends its requests one after another, so the number of a realm's jobs
 *   under a lease is the number of its requests in flight; the claim (quickbooks.jobs.ts) takes
 *   only the slots left, under a lock per realm.
 *
 * Waiting is the only pacing: a request goes the moment the budget has a point, so a burst runs
 * at the realm's limit, not below it.
 */
import { RateLimiterRes } from 'rate-limiter-flexible';

export interface RealmLimits {
  /** Requests in flight at once per realm. */
  concurrent: number;
  /** Requests per window per realm. */
  perWindow: number;
  windowSec: number;
}

export const INTUIT_LIMITS: RealmLimits = { concurrent: 10, perWindow: 500, windowSec: 60 };

/** What the shared budget needs of a rate-limiter-flexible limiter (memory, Redis or database). */
export interface SharedBudget {
  consume(key: string, points?: number): Promise<RateLimiterRes>;
  block(key: string, secDuration: number): Promise<RateLimiterRes>;
}

export class RealmPace {
  constructor(
    readonly limits: RealmLimits,
    readonly budget: SharedBudget,
  ) {}

  /** Takes one request of the realm's budget: 0 when it may go, else how long until a point is free. */
  async take(realm: string): Promise<number> {
    try {
      await this.budget.consume(realm);
      return 0;
    } catch (rej) {
      if (rej instanceof RateLimiterRes) return Math.max(1, rej.msBeforeNext);
      // A store that fails past its insurance must not stop the sync; Intuit's 429 still paces it.
      return 0;
    }
  }

  /** A 429: no process calls the realm before `ms` has passed (whole seconds; 0 pauses nothing). */
  async pause(realm: string, ms: number): Promise<void> {
    const sec = Math.ceil(ms / 1000);
    if (sec <= 0) return; // rate-limiter-flexible reads a block of 0 s as "for ever"
    await this.budget.block(realm, sec).catch(() => {});
  }
}
