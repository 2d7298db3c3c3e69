import type { TaskContext, WorkerTask } from '../background/runner.js';
import type { Config } from '../config.js';
import { isCitus } from '../db/citus.js';
import type { Database } from '../db/client.js';
import { listenOn } from '../db/listen.js';
import { asPlatform, asPlatformStatement } from '../platform/cross-tenant.js';
import { WAKE_CHANNEL } from '../platform/events/outbox.js';
import { SecretBox } from '../platform/secrets.js';
import { type AttemptResult, createSender, DELIVERY_TIMEOUT_MS, type Sender } from './delivery.js';
import { dispatchEvents } from './fanout.js';
import {
  type ClaimedDelivery,
  claimDeliveries,
  type RecordOutcome,
  recordAttempt,
  recordSuccesses,
  recordSuccessesAndClaim,
} from './queue.js';

export interface WebhookWorkerOptions {
  /** Deliveries in flight at once in this process. */
  concurrency?: number;
  /**
   * Deliveries of one endpoint in flight at once across ALL workers (counted in the
   * database), so a slow endpoint cannot take every slot and a receiver sees at most this many.
   */
  perEndpoint?: number;
  /** Per-attempt time-out (spec: 10 s). Tests shorten it. */
  timeoutMs?: number;
  /** How long a claim is held; must exceed the time-out so a live worker keeps its claim. */
  leaseMs?: number;
  /** Polling interval (PGlite, and the safety net beside LISTEN on PostgreSQL). */
  pollMs?: number;
  /**
   * Fan out and claim one organization at a time (docs/scaling.md: Citus locks rows only within
   * one shard). Unset: chosen at the first pass, on when the database is Citus (`isCitus`).
   */
  perOrganization?: boolean;
}

type Log = TaskContext['log'];
interface PendingResult {
  claim: ClaimedDelivery;
  result: AttemptResult;
  resolve(outcome: RecordOutcome): void;
  reject(err: unknown): void;
}
const DISPATCH_BATCH = 200;
const SECRET_CACHE_MS = 10_000;
const RECORD_BATCH = 200;

/**
 * The delivery engine of one process: fans out events, claims due deliveries up to
 * its concurrency and sends them without waiting for the batch, so a slow or
 * stalling receiver holds one slot, never the others.
 */
export class WebhookWorker {
  readonly #database: Database;
  readonly #db: Database['db'];
  readonly #config: Config;
  readonly #log: Log;
  readonly #sender: Sender;
  readonly #box: SecretBox;
  readonly #concurrency: number;
  readonly #perEndpoint: number;
  readonly #leaseMs: number;
  /** Every delivery between claim and its recorded result (what stop() waits for). */
  readonly #inFlight = new Set<Promise<void>>();
  /** Deliveries whose request is under way: the slots `concurrency` bounds. */
  #sending = 0;
  /** Slots promised to a claim under way (the tick's, or the writer's after a batch). */
  #reserved = 0;
  /**
   * A claim under way in this process (the tick's or the writer's). One at a time: two
   * claims of one process would mostly meet on the same endpoints' locks, and the second
   * would come back empty (SKIP LOCKED) after a round trip; the one under way wakes the
   * loop when it is back, so slots freed meanwhile are claimed right after.
   */
  #claiming = false;
  /** Claims whose receiver has answered and whose result is not written yet (see ClaimOptions.answered). */
  readonly #answered = new Set<string>();
  /** Every claim of this worker whose result is not written yet (see ClaimOptions.held). */
  readonly #held = new Set<string>();
  #stopping = false;
  #completedSinceTick = false;
  #wake: () => void = () => {};
  /** Fan-out runs when told of new events (LISTEN), after a full batch, or every poll interval. */
  #eventsWaiting = true;
  #lastDispatch = 0;
  readonly #pollMs: number;
  readonly #claimBatch: number;
  #idleSlots = true;
  readonly #results: PendingResult[] = [];
  #writing = false;
  readonly #secrets = new Map<string, string>();
  #secretsAt = 0;
  #perOrganization: boolean | undefined;

  constructor(database: Database, config: Config, log: Log, opts: WebhookWorkerOptions = {}) {
    this.#database = database;
    this.#db = database.db;
    this.#config = config;
    this.#log = log;
    const timeoutMs = opts.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    this.#concurrency = opts.concurrency ?? 32;
    this.#perEndpoint = Math.min(opts.perEndpoint ?? 8, this.#concurrency);
    this.#leaseMs = opts.leaseMs ?? timeoutMs + 20_000;
    this.#pollMs = opts.pollMs ?? 250;
    this.#claimBatch = Math.max(1, Math.floor(this.#concurrency / 4));
    this.#sender = createSender({
      allowPrivateTargets: config.webhookAllowPrivateTargets,
      timeoutMs,
      connectionsPerEndpoint: this.#perEndpoint,
    });
    this.#box = new SecretBox(config.authSecret);
    this.#perOrganization = opts.perOrganization;
  }

  /** New events were announced (NOTIFY). */
  eventsWaiting(): void {
    this.#eventsWaiting = true;
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  /**
   * Slots free for new claims. A slot is freed when its request is answered, not when
   * the result is written: results are written in batches behind the requests, and
   * the delivery keeps its lease until then. So that a slow database cannot pile up
   * unbounded unwritten results, at most `concurrency` of them may wait.
   */
  #free(): number {
    if (this.#stopping) return 0;
    return Math.min(this.#concurrency - this.#sending, 2 * this.#concurrency - this.#inFlight.size) - this.#reserved;
  }

  /** One bounded pass: fan out, then fill free slots. Returns work found (the runner loops while > 0). */
  async tick(wake: () => void): Promise<number> {
    this.#wake = wake;
    this.#completedSinceTick = false;
    this.#perOrganization ??= await isCitus(this.#database);
    let fanOut: Promise<number> | undefined;
    if (this.#eventsWaiting || Date.now() - this.#lastDispatch >= this.#pollMs) {
      this.#eventsWaiting = false;
      this.#lastDispatch = Date.now();
      fanOut = dispatchEvents(this.#database, DISPATCH_BATCH, this.#perOrganization);
      // Quiet: fan out first so the new deliveries are claimed in this same pass (latency).
      // Backlogged (the last claim filled every slot): fan out beside the claim, so the
      // slots do not wait on the fan-out transaction.
      if (this.#idleSlots) await fanOut.catch(() => {});
    }
    // Both settle before the pass ends, so a failing one never leaves the other running.
    const [fanned, claim] = await Promise.allSettled([fanOut ?? 0, this.#claim()]);
    if (fanned.status === 'rejected') throw fanned.reason;
    if (claim.status === 'rejected') throw claim.reason;
    const dispatched = fanned.value;
    const claimed = claim.value;
    if (dispatched >= DISPATCH_BATCH) this.#eventsWaiting = true;
    // A slot freed while we were querying: go again at once rather than after the poll interval.
    const freedMeanwhile = this.#completedSinceTick && this.#free() >= this.#claimBatch;
    return dispatched + claimed + (freedMeanwhile ? 1 : 0);
  }

  /** Claims due deliveries for the free slots and starts them; returns how many. */
  async #claim(): Promise<number> {
    const free = this.#free();
    // Claim in batches: one query per few freed slots rather than one per completed delivery.
    if (free <= 0 || (free < this.#claimBatch && this.#sending > 0 && !this.#idleSlots)) return 0;
    if (this.#claiming) return 0;
    // The per-endpoint cap is counted in the database over every worker's claims (queue.ts).
    this.#reserved += free;
    this.#claiming = true;
    let claimed: ClaimedDelivery[];
    try {
      claimed = await claimDeliveries(this.#database, this.#claimOptions(free));
    } finally {
      this.#reserved -= free;
      this.#claiming = false;
      this.#completedSinceTick = true;
    }
    for (const c of claimed) this.#start(c);
    // Nothing more was due: let later wakes claim even a single slot (low latency when quiet).
    this.#idleSlots = claimed.length < free;
    return claimed.length;
  }

  #claimOptions(limit: number) {
    return {
      limit,
      leaseMs: this.#leaseMs,
      perEndpoint: this.#perEndpoint,
      answered: [...this.#answered],
      held: [...this.#held],
      perOrganization: this.#perOrganization,
    };
  }

  #start(claim: ClaimedDelivery) {
    this.#sending++;
    this.#held.add(claim.id);
    let slotHeld = true;
    const releaseSlot = () => {
      if (!slotHeld) return;
      slotHeld = false;
      this.#sending--;
      this.#completedSinceTick = true;
      this.#wake();
    };
    const p = this.#deliver(claim, releaseSlot)
      .catch((err) => this.#log.error({ err, deliveryId: claim.id }, 'webhook delivery bookkeeping failed'))
      .finally(() => {
        this.#held.delete(claim.id);
        this.#inFlight.delete(p);
        releaseSlot();
        this.#completedSinceTick = true;
        this.#wake();
      });
    this.#inFlight.add(p);
  }

  async #deliver(claim: ClaimedDelivery, sent: () => void): Promise<void> {
    let secrets: string[];
    try {
      secrets = [this.#open(claim.secretEnc)];
      if (claim.previousValid && claim.previousSecretEnc) secrets.push(this.#open(claim.previousSecretEnc));
    } catch (err) {
      // AUTH_SECRET changed under stored secrets: log loudly; the lease expires and it is retried later.
      this.#log.error({ err, endpointId: claim.endpointId }, 'cannot decrypt webhook secret (AUTH_SECRET changed?)');
      return;
    }
    const result = await this.#sender.send({
      url: claim.url,
      deliveryId: claim.id,
      event: claim.event,
      body: claim.body,
      secrets,
      endpointId: claim.endpointId,
    });
    // An accepted delivery no longer holds its endpoint's room: the next may go while
    // this result is written. A refused one (429/503 with Retry-After, a failure) keeps
    // it until its pause or back-off is written, so nothing is sent past a pause.
    if (result.ok) this.#answered.add(claim.id);
    sent();
    let outcome: RecordOutcome;
    try {
      outcome = await this.#record(claim, result);
    } finally {
      this.#answered.delete(claim.id);
    }
    if (outcome.endpointDeactivated && !result.ok) {
      this.#log.warn(
        { endpointId: claim.endpointId },
        'webhook endpoint deactivated after consecutive failed deliveries',
      );
    }
  }

  /**
   * Decrypted secrets, keyed by their sealed form (so a rotated secret is a new key),
   * kept for a few seconds: an endpoint's deliveries in one burst share one decryption.
   */
  #open(sealed: string): string {
    const now = Date.now();
    if (now - this.#secretsAt > SECRET_CACHE_MS) {
      this.#secrets.clear();
      this.#secretsAt = now;
    }
    let plain = this.#secrets.get(sealed);
    if (plain === undefined) {
      plain = this.#box.open(sealed);
      this.#secrets.set(sealed, plain);
    }
    return plain;
  }

  /**
   * Attempt results are written in batches by one writer: under load many
   * results share one call and one commit (one fsync), and a lone result is written at
   * once. The lease is held until the result is written (the slot is not, see #free);
   * a batch of successes also claims the next deliveries in the same call (#flush).
   */
  #record(claim: ClaimedDelivery, result: AttemptResult): Promise<RecordOutcome> {
    return new Promise((resolve, reject) => {
      this.#results.push({ claim, result, resolve, reject });
      this.#kickFlush();
    });
  }

  #kickFlush() {
    // One writer: results that arrive while it writes form the next batch, so under load a
    // call carries many results and a lone result is still written at once. (A second
    // writer measured no faster: its claims met the first one's endpoint locks.) Results are
    // not held back for the requests still under way, to write a burst in one call: that
    // halves the calls, but the worker then waits idle through each one, where written as
    // they come one half's call runs while the other half is at the receiver (webhook bench,
    // 2 cores: about a fifth more deliveries per second without the hold).
    if (this.#writing || this.#results.length === 0) return;
    const batch = this.#results.splice(0, RECORD_BATCH);
    this.#writing = true;
    void this.#flush(batch).finally(() => {
      this.#writing = false;
      this.#kickFlush();
    });
  }

  async #flush(batch: PendingResult[]): Promise<void> {
    const schedule = this.#config.webhookRetryScheduleMs;
    const ok = batch.filter((b) => b.result.ok);
    if (ok.length === batch.length) {
      // Successes only (the usual batch under load): one call records them and claims for
      // the slots that are free now, so the loop turns in one round trip (queue.ts).
      const free = this.#claiming ? 0 : Math.max(0, this.#free());
      this.#reserved += free;
      if (free > 0) this.#claiming = true;
      let done: Awaited<ReturnType<typeof recordSuccessesAndClaim>> | undefined;
      try {
        done = await recordSuccessesAndClaim(this.#database, ok, this.#claimOptions(free));
      } catch {
        // Below: write them one by one, so one bad row cannot sink the others.
      } finally {
        this.#reserved -= free;
        if (free > 0) {
          this.#claiming = false;
          this.#completedSinceTick = true;
          this.#wake();
        }
      }
      if (done) {
        for (const c of done.claimed) this.#start(c);
        for (const b of batch) {
          const hit = done.applied.has(b.claim.id);
          b.resolve({ applied: hit, status: hit ? 'succeeded' : null, endpointDeactivated: false });
        }
        return;
      }
    } else if (batch.length > 1) {
      // A lone failure goes straight to the one-by-one path below (one statement either way).
      try {
        const outcomes = await asPlatform(this.#db, async (db) => {
          const applied = await recordSuccesses(db, ok, this.#perOrganization);
          const out = new Map<PendingResult, RecordOutcome>();
          for (const b of ok) {
            const hit = applied.has(b.claim.id);
            out.set(b, { applied: hit, status: hit ? 'succeeded' : null, endpointDeactivated: false });
          }
          for (const b of batch) if (!b.result.ok) out.set(b, await recordAttempt(db, b.claim, b.result, schedule));
          return out;
        });
        for (const b of batch) b.resolve(outcomes.get(b) as RecordOutcome);
        return;
      } catch {
        // Fall through: write them one by one, so one bad row cannot sink the others.
      }
    }
    for (const b of batch) {
      // The database may be briefly unreachable; retry before the lease runs out. If it
      // never succeeds the lease expires and the attempt is sent again (at-least-once:
      // receivers deduplicate on X-Service-Delivery).
      for (let i = 0; ; i++) {
        try {
          b.resolve(await asPlatformStatement(this.#database, (db) => recordAttempt(db, b.claim, b.result, schedule)));
          break;
        } catch (err) {
          if (i >= 8) {
            b.reject(err);
            break;
          }
          await new Promise((r) => setTimeout(r, Math.min(250 * 2 ** i, 2000)));
        }
      }
    }
  }

  /** Waits for in-flight deliveries (each bounded by the time-out), then closes connections. */
  async stop(): Promise<void> {
    // No new claims (the writer claims too); wait until the last delivery is recorded.
    this.#stopping = true;
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
    await this.#sender.close();
  }
}

/**
 * LISTEN for emit()'s pg_notify on PostgreSQL so new events go out at once; a
 * dedicated connection that reconnects when the database drops it. PGlite (one
 * process) relies on its own listen support or on polling.
 */
function listenForWork(
  database: Database,
  listenUrl: string | undefined,
  log: Log,
  onWake: () => void,
): Promise<() => Promise<void>> {
  return listenOn(database, listenUrl, WAKE_CHANNEL, onWake, (err) =>
    log.debug({ err }, 'webhook LISTEN connection failed; retrying'),
  );
}

/** The worker task (listed in src/modules/tasks.ts). Options exist for tests and benchmarks. */
export function createWebhookTask(opts: WebhookWorkerOptions = {}): WorkerTask {
  let worker: WebhookWorker | undefined;
  const get = (ctx: TaskContext) => {
    worker ??= new WebhookWorker(ctx.database, ctx.config, ctx.log, opts);
    return worker;
  };
  return {
    name: 'webhooks',
    intervalMs: opts.pollMs ?? 250,
    run: (ctx) => get(ctx).tick(ctx.wake),
    async start(ctx) {
      const w = get(ctx);
      const onWake = () => {
        w.eventsWaiting();
        ctx.wake();
      };
      const unlisten = await listenForWork(ctx.database, ctx.config.listenDatabaseUrl, ctx.log, onWake).catch((err) => {
        ctx.log.warn({ err }, 'webhook LISTEN unavailable; polling only');
        return async () => {};
      });
      return async () => {
        await unlisten();
        await w.stop();
      };
    },
  };
}
