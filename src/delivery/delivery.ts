import type { IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import type { Dispatcher, Pool } from 'undici';
import { signatureHeaders } from './signing.js';
import { guardedLookup, literalBlockedReason } from './ssrf.js';

export const USER_AGENT = 'Service-Webhooks/1.0';
/** Spec Part 8: a delivery times out after 10 seconds. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** How much of a response body is kept in the attempt log. */
export const RESPONSE_CAPTURE_BYTES = 4096;

export interface AttemptInput {
  url: string;
  deliveryId: string;
  event: string;
  body: string;
  /** Current secret first, then the previous one while the rotation overlap lasts. */
  secrets: readonly string[];
  /**
   * The endpoint it goes to: its connections are its own (see createSender). Without it the
   * attempt shares the connections of every attempt to the same URL.
   */
  endpointId?: string;
}

export interface AttemptResult {
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
  attemptedAt: Date;
  /**
   * A 429 or 503 that said when to come back (Retry-After, clamped to 1 s..1 h): the
   * attempt is deferred, not failed (queue.ts recordDeferral). Null otherwise.
   */
  retryAfterMs?: number | null;
}

/** Bounds on a receiver's Retry-After: at least 1 s (no hot loop), at most 1 h (the longest retry delay). */
export const RETRY_AFTER_MIN_MS = 1000;
export const RETRY_AFTER_MAX_MS = 60 * 60 * 1000;

/**
 * Retry-After (RFC 9110 10.2.3): delay-seconds or an HTTP-date. Returns the delay in
 * ms clamped to [RETRY_AFTER_MIN_MS, RETRY_AFTER_MAX_MS], or null when absent or unreadable.
 */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | null {
  const raw = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!raw) return null;
  let ms: number;
  if (/^\d+$/.test(raw)) ms = Number(raw) * 1000;
  else {
    // An HTTP-date names its day and month; a bare "-5" or "2026" is not one (Date.parse would take it).
    if (!/[a-z]{3}/i.test(raw)) return null;
    const at = Date.parse(raw);
    if (Number.isNaN(at)) return null;
    ms = at - now;
  }
  return Math.min(RETRY_AFTER_MAX_MS, Math.max(RETRY_AFTER_MIN_MS, ms));
}

export interface Sender {
  send(input: AttemptInput): Promise<AttemptResult>;
  close(): Promise<void>;
}

export interface SenderOptions {
  allowPrivateTargets: boolean;
  timeoutMs?: number;
  /**
   * Connections kept per endpoint; deliveries beyond it queue inside undici. The claim
   * already keeps an endpoint's requests in flight under its cap, so this is that cap.
   */
  connectionsPerEndpoint?: number;
  /** Endpoints with a connection pool kept at once; the least recently used beyond it is closed. */
  maxPools?: number;
}

/** Endpoints whose connection pools a sender keeps at once (LRU beyond it). */
export const MAX_ENDPOINT_POOLS = 256;

/**
 * Sends delivery attempts. A connection pool (an undici Pool) per endpoint, not per origin:
 * most receivers live on a few integration platforms, so many tenants' endpoints share one
 * host, and with one pool per origin sized to an endpoint's cap, one endpoint answering
 * slowly held every connection to the host and the others' deliveries queued behind it
 * (issue 47: another tenant's events on the same host waited 1.7 s behind a 2 s receiver).
 * With a pool per endpoint a slow endpoint holds only its own connections, at most its cap
 * (the claim counts the cap over every worker), and a host's connections are the sum over
 * the endpoints that have work. The pools are kept in least-recently-used order and bounded
 * (`maxPools`): the one used longest ago is closed (gracefully: what it has under way
 * finishes) when a new one would exceed the bound; idle connections close after 4 s anyway.
 *
 * Redirects are never followed (undici's dispatch never does), and `connect.lookup` filters
 * resolved addresses through the SSRF guard, so the address actually connected to is the one
 * checked.
 *
 * Each attempt goes through the pool's low-level `dispatch` with a handler of its own
 * (`Attempt`), not through `request`: request wraps every response in a Readable stream,
 * an async resource and an abort-signal listener, which the attempt does not need (it keeps
 * the status, two headers and at most 4 KiB of body). That machinery was about a tenth of
 * the worker's CPU per delivery against a receiver that answers at once.
 */
export function createSender(opts: SenderOptions): Sender {
  const timeoutMs = opts.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const poolOptions: Pool.Options = {
    connections: opts.connectionsPerEndpoint ?? 8,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connectTimeout: timeoutMs,
    keepAliveTimeout: 4000,
    connect: opts.allowPrivateTargets ? {} : { lookup: guardedLookup as never },
  };
  const pools = new EndpointPools(poolOptions, opts.maxPools ?? MAX_ENDPOINT_POOLS);
  const targets = new TargetCache(opts.allowPrivateTargets);
  const deadlines = new Deadlines(timeoutMs);

  return {
    send(input) {
      const attempt = new Attempt(deadlines);
      const target = targets.get(input.url);
      if (typeof target === 'string') return attempt.refuse(target);
      const headers = {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'x-service-event': input.event,
        'x-service-delivery': input.deliveryId,
        // Signed afresh per attempt: a retry an hour later still verifies within a 300 s tolerance.
        ...signatureHeaders(input.secrets, input.deliveryId, input.body, Math.floor(Date.now() / 1000)),
      };
      const settled = attempt.settled;
      try {
        pools
          .get(input.endpointId ?? input.url, target.origin)
          .dispatch({ origin: target.origin, path: target.path, method: 'POST', headers, body: input.body }, attempt);
      } catch (err) {
        attempt.onResponseError(null, err as Error);
      }
      return settled;
    },
    close: () => pools.close(),
  };
}

/**
 * undici, loaded with the first delivery: importing it cost about 0.13 s of CPU at every start,
 * before /readyz, in a process whose worker may have no webhook to deliver for a while.
 */
let PoolClass: typeof Pool | undefined;
function undiciPool(): typeof Pool {
  PoolClass ??= (createRequire(import.meta.url)('undici') as typeof import('undici')).Pool;
  return PoolClass;
}

/**
 * A connection pool per endpoint (keyed by the endpoint and its origin: an endpoint whose URL
 * moves to another host gets a new pool, the old one ages out), most recently used last in the
 * map's order. Bounded: past `max`, the least recently used is closed; close() lets what it has
 * under way finish, and the claim keeps that endpoint under its cap whatever pool it uses next.
 */
export class EndpointPools {
  readonly #pools = new Map<string, Pool>();
  constructor(
    private readonly options: Pool.Options,
    private readonly max: number,
  ) {}

  get size(): number {
    return this.#pools.size;
  }

  get(endpoint: string, origin: string): Pool {
    const key = `${endpoint} ${origin}`;
    let pool = this.#pools.get(key);
    if (pool) {
      // Most recently used goes last (one delete and set: the map keeps insertion order).
      this.#pools.delete(key);
    } else {
      pool = new (undiciPool())(origin, this.options);
      while (this.#pools.size >= this.max) {
        const [oldestKey, oldest] = this.#pools.entries().next().value as [string, Pool];
        this.#pools.delete(oldestKey);
        oldest.close().catch(() => {});
      }
    }
    this.#pools.set(key, pool);
    return pool;
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.allSettled(pools.map((p) => p.close()));
  }
}

/**
 * The time limits of one sender's attempts under way, kept in one list, oldest first, with
 * one timer for the oldest: every attempt of a sender has the same limit, so the oldest is
 * always the next to run out. An attempt leaves the list when it settles (unlinked in place).
 * A timer per attempt, set and cleared, was a few µs of the worker's CPU per delivery.
 */
class Deadlines {
  #head: Attempt | null = null;
  #tail: Attempt | null = null;
  /** A timer is set (for the head, or for one that has left the list since: it re-arms). */
  #armed = false;
  readonly #fire = () => this.#expire();

  constructor(readonly timeoutMs: number) {}

  add(attempt: Attempt): void {
    attempt.prev = this.#tail;
    attempt.next = null;
    if (this.#tail) this.#tail.next = attempt;
    else this.#head = attempt;
    this.#tail = attempt;
    if (!this.#armed) this.#arm(attempt.deadline);
  }

  remove(attempt: Attempt): void {
    if (attempt.prev) attempt.prev.next = attempt.next;
    else if (this.#head === attempt) this.#head = attempt.next;
    else return; // not listed (already expired)
    if (attempt.next) attempt.next.prev = attempt.prev;
    else this.#tail = attempt.prev;
    attempt.prev = null;
    attempt.next = null;
  }

  #arm(at: number): void {
    this.#armed = true;
    // +1: a timer may go off a fraction of a millisecond early; the deadline must have passed.
    setTimeout(this.#fire, Math.max(0, at - performance.now()) + 1).unref();
  }

  /** The timer went off: time out every attempt past its limit, then wait for the next oldest. */
  #expire(): void {
    this.#armed = false;
    const now = performance.now();
    while (this.#head && this.#head.deadline <= now) {
      const attempt = this.#head;
      this.remove(attempt);
      attempt.timeOut();
    }
    if (this.#head) this.#arm(this.#head.deadline);
  }
}

/** Where a URL sends to, or why it cannot be sent to. */
type Target = { origin: string; path: string } | string;

/**
 * Endpoint URLs parsed once (and checked once against the literal-address rules) rather
 * than at every attempt; an endpoint's deliveries come in bursts. Bounded: cleared when full.
 */
class TargetCache {
  readonly #byUrl = new Map<string, Target>();
  constructor(private readonly allowPrivateTargets: boolean) {}

  get(raw: string): Target {
    let target = this.#byUrl.get(raw);
    if (target === undefined) {
      target = this.#parse(raw);
      if (this.#byUrl.size >= 1000) this.#byUrl.clear();
      this.#byUrl.set(raw, target);
    }
    return target;
  }

  #parse(raw: string): Target {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return 'Invalid URL';
    }
    if (!this.allowPrivateTargets) {
      const reason = literalBlockedReason(url);
      if (reason) return `Blocked target ${url.hostname}: ${reason}`;
    }
    return { origin: url.origin, path: `${url.pathname}${url.search}` };
  }
}

/**
 * One attempt as undici's dispatch handler: it notes the status and the two headers it
 * reads, keeps at most RESPONSE_CAPTURE_BYTES of the body (then drops the connection, so
 * a receiver answering with gigabytes costs 4 KiB of memory), and settles once: with the
 * response, with the error, or when its time limit (over the whole attempt: waiting for
 * a connection, connecting, headers, body) runs out, whichever comes first.
 */
class Attempt implements Dispatcher.DispatchHandler {
  readonly attemptedAt = new Date();
  readonly #started = performance.now();
  readonly #timeoutMs: number;
  readonly #deadlines: Deadlines;
  /** When its time limit runs out (performance.now() time); its neighbours in the sender's list. */
  readonly deadline: number;
  prev: Attempt | null = null;
  next: Attempt | null = null;
  #resolve!: (result: AttemptResult) => void;
  readonly settled = new Promise<AttemptResult>((resolve) => {
    this.#resolve = resolve;
  });
  #done = false;
  #controller: Dispatcher.DispatchController | null = null;
  #status = 0;
  #headers: IncomingHttpHeaders | null = null;
  #chunks: Buffer[] = [];
  #size = 0;

  constructor(deadlines: Deadlines) {
    this.#deadlines = deadlines;
    this.#timeoutMs = deadlines.timeoutMs;
    // The sender's shared list, not AbortSignal.timeout() (a weakly held timer and its
    // finalizer, about 9 µs per call here) nor a timer of its own.
    this.deadline = this.#started + this.#timeoutMs;
    deadlines.add(this);
  }

  /** Every result has the same fields in the same order (one object shape for V8). */
  result(
    ok: boolean,
    statusCode: number | null,
    error: string | null,
    responseBody: string | null,
    retryAfterMs: number | null = null,
  ): AttemptResult {
    return {
      ok,
      statusCode,
      durationMs: Math.max(0, Math.round(performance.now() - this.#started)),
      error,
      responseBody,
      attemptedAt: this.attemptedAt,
      retryAfterMs,
    };
  }

  /** Not sent: the URL cannot be sent to (`reason`). Settled at once. */
  refuse(reason: string): Promise<AttemptResult> {
    this.#settle(this.result(false, null, reason, null));
    return this.settled;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    // Timed out while it waited for a connection: it has been answered already.
    if (this.#done) controller.abort(timeoutReason(this.#timeoutMs));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // 1xx informational answers are followed by the real one.
    if (statusCode < 200) return;
    this.#status = statusCode;
    this.#headers = headers;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#done) return;
    const room = RESPONSE_CAPTURE_BYTES - this.#size;
    this.#chunks.push(room >= chunk.length ? chunk : chunk.subarray(0, room));
    this.#size += Math.min(room, chunk.length);
    if (this.#size >= RESPONSE_CAPTURE_BYTES) {
      this.#finish(this.#captured());
      controller.abort(new Error('response capture limit reached'));
    }
  }

  onResponseEnd(): void {
    if (!this.#done) this.#finish(this.#captured());
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, err: Error): void {
    if (this.#done) return;
    // The status already arrived: a body that stalls or breaks is logged but does not change the verdict.
    if (this.#status !== 0) this.#finish(`[response body unreadable: ${describeError(err, this.#timeoutMs)}]`);
    else this.#settle(this.result(false, null, describeError(err, this.#timeoutMs), null));
  }

  /** Its time limit ran out (Deadlines). */
  timeOut(): void {
    if (this.#done) return;
    const reason = timeoutReason(this.#timeoutMs);
    // Aborting reports the error to onResponseError, which settles the attempt. One not
    // yet on a connection is settled here and aborted when it gets one.
    if (this.#controller) this.#controller.abort(reason);
    if (!this.#done) this.onResponseError(null, reason);
  }

  /** The captured body as text: invalid UTF-8 becomes U+FFFD; NUL bytes are removed (PostgreSQL text cannot hold them). */
  #captured(): string {
    const chunks = this.#chunks;
    const text = (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString('utf8');
    return text.includes('\u0000') ? text.replaceAll('\u0000', '') : text;
  }

  #finish(captured: string): void {
    const status = this.#status;
    const headers = this.#headers ?? {};
    const ok = status >= 200 && status < 300;
    const error = ok
      ? null
      : status >= 300 && status < 400
        ? `Redirect ${status} not followed${headers.location ? ` (to ${String(headers.location).slice(0, 200)})` : ''}`
        : `HTTP ${status}`;
    const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(headers['retry-after']) : null;
    this.#settle(this.result(ok, status, error, captured, retryAfterMs));
  }

  #settle(result: AttemptResult): void {
    this.#done = true;
    this.#deadlines.remove(this);
    this.#chunks = [];
    this.#resolve(result);
  }
}

/** What the time limit aborts with: the same TimeoutError that AbortSignal.timeout() gives. */
function timeoutReason(timeoutMs: number): DOMException {
  return new DOMException(`The operation was aborted due to timeout after ${timeoutMs} ms`, 'TimeoutError');
}

function describeError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (
    e?.name === 'TimeoutError' ||
    e?.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    e?.code === 'UND_ERR_BODY_TIMEOUT' ||
    e?.code === 'UND_ERR_CONNECT_TIMEOUT'
  ) {
    return `Timed out after ${timeoutMs} ms`;
  }
  const code = e?.code ?? e?.cause?.code;
  const message = e?.message ?? String(err);
  return (code ? `${code}: ${message}` : message).slice(0, 500);
}
