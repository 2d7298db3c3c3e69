/*
 * Intuit's limits per realm (company): at most 10 requests at once and 500 a minute; a 429
 * pauses the realm for its Retry-After. Kept in the process: each worker process holds its own
 * share (operations.md §11). Waiting here is the only pacing: a request goes the moment both
 * limits allow it, so a burst runs at the realm's limit, not below it.
 */

export interface ThrottleLimits {
  concurrent: number;
  perMinute: number;
}

export const INTUIT_LIMITS: ThrottleLimits = { concurrent: 10, perMinute: 500 };

interface RealmState {
  active: number;
  /** Start times of the requests of the last minute, oldest first. */
  started: number[];
  pausedUntil: number;
  waiting: Array<() => void>;
  timer: NodeJS.Timeout | undefined;
}

export class RealmThrottle {
  readonly #realms = new Map<string, RealmState>();
  readonly #limits: ThrottleLimits;
  readonly #now: () => number;

  constructor(limits: ThrottleLimits = INTUIT_LIMITS, now: () => number = Date.now) {
    this.#limits = limits;
    this.#now = now;
  }

  #state(realm: string): RealmState {
    let s = this.#realms.get(realm);
    if (!s) {
      s = { active: 0, started: [], pausedUntil: 0, waiting: [], timer: undefined };
      this.#realms.set(realm, s);
    }
    return s;
  }

  /** Waits for a slot of the realm; call the returned function when the request is done. */
  acquire(realm: string): Promise<() => void> {
    const s = this.#state(realm);
    return new Promise((resolve) => {
      s.waiting.push(() => {
        let released = false;
        resolve(() => {
          if (released) return;
          released = true;
          s.active--;
          this.#pump(realm, s);
        });
      });
      this.#pump(realm, s);
    });
  }

  /** A 429: nobody calls the realm before `ms` has passed. */
  pause(realm: string, ms: number): void {
    const s = this.#state(realm);
    s.pausedUntil = Math.max(s.pausedUntil, this.#now() + ms);
  }

  /** How long the realm is paused for still (0: not paused). */
  pausedFor(realm: string): number {
    return Math.max(0, this.#state(realm).pausedUntil - this.#now());
  }

  #pump(realm: string, s: RealmState): void {
    const now = this.#now();
    while (s.started.length > 0 && (s.started[0] as number) <= now - 60_000) s.started.shift();
    while (s.waiting.length > 0 && s.active < this.#limits.concurrent && s.started.length < this.#limits.perMinute) {
      if (s.pausedUntil > now) break;
      const next = s.waiting.shift() as () => void;
      s.active++;
      s.started.push(now);
      next();
    }
    if (s.waiting.length === 0 || s.active >= this.#limits.concurrent || s.timer) return;
    // Blocked by the minute's count or a pause: wake when the oldest start leaves the window.
    const wakeAt = Math.max(
      s.pausedUntil,
      s.started.length >= this.#limits.perMinute ? (s.started[0] as number) + 60_000 : 0,
    );
    s.timer = setTimeout(
      () => {
        s.timer = undefined;
        this.#pump(realm, s);
      },
      Math.max(1, wakeAt - now),
    );
    s.timer.unref?.();
  }
}
