import pg from 'pg';
import type { Config } from '../config.js';
import type { Database, Db } from '../db/client.js';
import type { TaskContext, WorkerTask } from '../worker/runner.js';
import { type AttemptResult, createSender, DELIVERY_TIMEOUT_MS, type Sender } from './delivery.js';
import { dispatchEvents, WAKE_CHANNEL } from './fanout.js';
import { type ClaimedDelivery, claimDeliveries, type RecordOutcome, recordAttempt, recordSuccesses } from './queue.js';
import { SecretBox } from './secrets.js';

export interface WebhookWorkerOptions {
  /** Deliveries in flight at once in this process. */
  concurrency?: number;
  /** Deliveries of one endpoint in flight at once, so a slow endpoint cannot take every slot. */
  perEndpoint?: number;
  /** Per-attempt time-out (spec: 10 s). Tests shorten it. */
  timeoutMs?: number;
  /** How long a claim is held; must exceed the time-out so a live worker keeps its claim. */
  leaseMs?: number;
  /** Polling interval (PGlite, and the safety net beside LISTEN on PostgreSQL). */
  pollMs?: number;
}

type Log = TaskContext['log'];
interface PendingResult {
  claim: ClaimedDelivery;
  result: AttemptResult;
  resolve(outcome: RecordOutcome): void;
  reject(err: unknown): void;
}
const DISPATCH_BATCH = 200;

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
  readonly #inFlight = new Set<Promise<void>>();
  readonly #perEndpointInFlight = new Map<string, number>();
  #completedSinceTick = false;
  #wake: () => void = () => {};
  /** Fan-out runs when told of new events (LISTEN), after a full batch, or every poll interval. */
  #eventsWaiting = true;
  #lastDispatch = 0;
  readonly #pollMs: number;
  readonly #claimBatch: number;
  #idleSlots = true;
  readonly #results: PendingResult[] = [];
  #flushers = 0;

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
      connectionsPerOrigin: this.#perEndpoint,
    });
    this.#box = new SecretBox(config.authSecret);
  }

  /** New events were announced (NOTIFY). */
  eventsWaiting(): void {
    this.#eventsWaiting = true;
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** One bounded pass: fan out, then fill free slots. Returns work found (the runner loops while > 0). */
  async tick(wake: () => void): Promise<number> {
    this.#wake = wake;
    this.#completedSinceTick = false;
    let dispatched = 0;
    if (this.#eventsWaiting || Date.now() - this.#lastDispatch >= this.#pollMs) {
      this.#eventsWaiting = false;
      this.#lastDispatch = Date.now();
      dispatched = await dispatchEvents(this.#database, DISPATCH_BATCH);
      if (dispatched >= DISPATCH_BATCH) this.#eventsWaiting = true;
    }
    const free = this.#concurrency - this.#inFlight.size;
    let claimed: ClaimedDelivery[] = [];
    // Claim in batches: one query per few freed slots rather than one per completed delivery.
    if (free > 0 && (free >= this.#claimBatch || this.#inFlight.size === 0 || this.#idleSlots)) {
      const busy = [...this.#perEndpointInFlight].filter(([, n]) => n >= this.#perEndpoint).map(([id]) => id);
      claimed = await claimDeliveries(this.#db, {
        limit: free,
        leaseMs: this.#leaseMs,
        perEndpoint: this.#perEndpoint,
        busyEndpoints: busy,
      });
      for (const c of claimed) this.#start(c);
      // Nothing more was due: let later wakes claim even a single slot (low latency when quiet).
      this.#idleSlots = claimed.length < free;
    }
    // A slot freed while we were querying: go again at once rather than after the poll interval.
    const freedMeanwhile = this.#completedSinceTick && this.#concurrency - this.#inFlight.size >= this.#claimBatch;
    return dispatched + claimed.length + (freedMeanwhile ? 1 : 0);
  }

  #start(claim: ClaimedDelivery) {
    this.#perEndpointInFlight.set(claim.endpointId, (this.#perEndpointInFlight.get(claim.endpointId) ?? 0) + 1);
    const p = this.#deliver(claim)
      .catch((err) => this.#log.error({ err, deliveryId: claim.id }, 'webhook delivery bookkeeping failed'))
      .finally(() => {
        this.#inFlight.delete(p);
        const n = (this.#perEndpointInFlight.get(claim.endpointId) ?? 1) - 1;
        if (n <= 0) this.#perEndpointInFlight.delete(claim.endpointId);
        else this.#perEndpointInFlight.set(claim.endpointId, n);
        this.#completedSinceTick = true;
        this.#wake();
      });
    this.#inFlight.add(p);
  }

  async #deliver(claim: ClaimedDelivery): Promise<void> {
    let secrets: string[];
    try {
      secrets = [this.#box.open(claim.secretEnc)];
      if (claim.previousValid && claim.previousSecretEnc) secrets.push(this.#box.open(claim.previousSecretEnc));
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
    });
    const outcome = await this.#record(claim, result);
    if (outcome.endpointDeactivated && !result.ok) {
      this.#log.warn({ endpointId: claim.endpointId }, 'webhook endpoint deactivated after consecutive failures');
    }
  }

  /**
   * Attempt results are written in small batches, one transaction each, by at most
   * two flushers: under load many results share one commit (one fsync), and a lone
   * result is written at once. The slot (and the lease) is held until it is written.
   */
  #record(claim: ClaimedDelivery, result: AttemptResult): Promise<RecordOutcome> {
    return new Promise((resolve, reject) => {
      this.#results.push({ claim, result, resolve, reject });
      this.#kickFlush();
    });
  }

  #kickFlush() {
    while (this.#flushers < 2 && this.#results.length > 0) {
      const batch = this.#results.splice(0, 100);
      this.#flushers++;
      void this.#flush(batch).finally(() => {
        this.#flushers--;
        this.#kickFlush();
      });
    }
  }

  async #flush(batch: PendingResult[]): Promise<void> {
    const schedule = this.#config.webhookRetryScheduleMs;
    if (batch.length > 1) {
      try {
        const outcomes = await this.#db.transaction(async (tx) => {
          const db = tx as unknown as Db;
          const ok = batch.filter((b) => b.result.ok);
          const applied = await recordSuccesses(db, ok);
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
          b.resolve(await recordAttempt(this.#db, b.claim, b.result, schedule));
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
    await Promise.allSettled([...this.#inFlight]);
    await this.#sender.close();
  }
}

/**
 * LISTEN for emit()'s pg_notify on PostgreSQL so new events go out at once; a
 * dedicated connection that reconnects when the database drops it. PGlite (one
 * process) relies on its own listen support or on polling.
 */
async function listenForWork(database: Database, log: Log, onWake: () => void): Promise<() => Promise<void>> {
  if (database.pglite) {
    const unlisten = await database.pglite.listen(WAKE_CHANNEL, onWake);
    return async () => {
      await unlisten().catch(() => {});
    };
  }
  const options = (database.pool as unknown as { options: pg.ClientConfig }).options;
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const connect = async () => {
    if (stopped) return;
    const c = new pg.Client({ ...options });
    client = c;
    const reconnect = () => {
      if (stopped || client !== c) return;
      client = undefined;
      c.end().catch(() => {});
      retry = setTimeout(() => void connect(), 1000);
      retry.unref();
    };
    c.on('error', reconnect);
    c.on('end', reconnect);
    c.on('notification', onWake);
    try {
      await c.connect();
      await c.query(`LISTEN ${WAKE_CHANNEL}`);
      onWake(); // anything emitted while we were disconnected
    } catch (err) {
      log.debug({ err }, 'webhook LISTEN connection failed; retrying');
      reconnect();
    }
  };
  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const c = client;
    client = undefined;
    // end() can wait forever on a connection that is still being established.
    if (c) await Promise.race([c.end().catch(() => {}), new Promise((r) => setTimeout(r, 1000).unref())]);
  };
}

/** The worker task (src/worker/tasks.ts). Options exist for tests and benchmarks. */
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
      const unlisten = await listenForWork(ctx.database, ctx.log, onWake).catch((err) => {
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
