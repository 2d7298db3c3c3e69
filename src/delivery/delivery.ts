import { EventEmitter } from 'node:events';
import { Agent, type Dispatcher, request } from 'undici';
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
  /** Connections kept per origin; deliveries beyond it queue inside undici. */
  connectionsPerOrigin?: number;
}

/**
 * Sends delivery attempts. One undici Agent per sender: redirects are never
 * followed (undici 7's `request` has no redirect handling unless an interceptor is
 * added), and its `connect.lookup` filters resolved addresses through the SSRF
 * guard, so the address actually connected to is the one checked.
 */
export function createSender(opts: SenderOptions): Sender {
  const timeoutMs = opts.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const agent = new Agent({
    connections: opts.connectionsPerOrigin ?? 16,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connectTimeout: timeoutMs,
    keepAliveTimeout: 4000,
    connect: opts.allowPrivateTargets ? {} : { lookup: guardedLookup as never },
  });

  return {
    async send(input) {
      const attemptedAt = new Date();
      const started = performance.now();
      // Every result has the same fields in the same order (one object shape for V8).
      const done = (
        ok: boolean,
        statusCode: number | null,
        error: string | null,
        responseBody: string | null,
        retryAfterMs: number | null = null,
      ): AttemptResult => ({
        ok,
        statusCode,
        durationMs: Math.max(0, Math.round(performance.now() - started)),
        error,
        responseBody,
        attemptedAt,
        retryAfterMs,
      });
      let url: URL;
      try {
        url = new URL(input.url);
      } catch {
        return done(false, null, 'Invalid URL', null);
      }
      if (!opts.allowPrivateTargets) {
        const reason = literalBlockedReason(url);
        if (reason) {
          return done(false, null, `Blocked target ${url.hostname}: ${reason}`, null);
        }
      }
      const headers = {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'x-service-event': input.event,
        'x-service-delivery': input.deliveryId,
        // Signed afresh per attempt: a retry an hour later still verifies within a 300 s tolerance.
        ...signatureHeaders(input.secrets, input.deliveryId, input.body, Math.floor(Date.now() / 1000)),
      };
      // One time limit over the whole attempt (connect, headers, body): a plain timer and
      // an AttemptDeadline (below), not AbortSignal.timeout(), which cost about 9 µs per call
      // here (a weakly held timer and its finalizer): 5 % of the worker's CPU per delivery.
      const deadline = new AttemptDeadline();
      const timer = setTimeout(() => deadline.fire(timeoutReason(timeoutMs)), timeoutMs);
      timer.unref();
      let response: Dispatcher.ResponseData;
      try {
        response = await request(url, {
          method: 'POST',
          headers,
          body: input.body,
          dispatcher: agent,
          signal: deadline,
        });
      } catch (err) {
        clearTimeout(timer);
        return done(false, null, describeError(err, timeoutMs), null);
      }
      let captured: string | null = null;
      try {
        captured = await readCapped(response.body, RESPONSE_CAPTURE_BYTES);
      } catch (err) {
        // The status already arrived; a body that stalls or breaks is logged but does not change the verdict.
        captured = `[response body unreadable: ${describeError(err, timeoutMs)}]`;
      } finally {
        clearTimeout(timer);
      }
      const status = response.statusCode;
      const ok = status >= 200 && status < 300;
      const error = ok
        ? null
        : status >= 300 && status < 400
          ? `Redirect ${status} not followed${response.headers.location ? ` (to ${String(response.headers.location).slice(0, 200)})` : ''}`
          : `HTTP ${status}`;
      const retryAfterMs =
        status === 429 || status === 503
          ? parseRetryAfter(response.headers['retry-after'] as string | undefined)
          : null;
      return done(ok, status, error, captured, retryAfterMs);
    },
    close: () => agent.close(),
  };
}

/**
 * Reads at most `limit` bytes and then drops the connection's body, so a receiver
 * answering with gigabytes costs 4 KiB of memory. NUL bytes are removed because
 * PostgreSQL text cannot hold them.
 */
function readCapped(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  // Plain 'data' events rather than `for await`: an async iterator per response is a
  // measurable share of the worker's CPU when receivers answer fast.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (err?: unknown) => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      if (err) return reject(err);
      // Invalid UTF-8 becomes U+FFFD, as a non-fatal TextDecoder would make it.
      const text = (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString('utf8');
      resolve(text.includes('\u0000') ? text.replaceAll('\u0000', '') : text);
    };
    const onData = (chunk: Buffer) => {
      const room = limit - size;
      chunks.push(room >= chunk.length ? chunk : chunk.subarray(0, room));
      size += Math.min(room, chunk.length);
      if (size >= limit) {
        finish();
        body.destroy();
      }
    };
    body.on('data', onData);
    body.once('end', () => finish());
    body.once('error', (err) => finish(err));
    // 'close' follows 'end' on every response: the error (and its stack trace, a few µs)
    // is made only when the body closed before it ended.
    body.once('close', () => {
      if (!settled) finish(new Error('response body closed early'));
    });
  });
}

/**
 * The signal undici's `request` aborts on: undici takes an EventEmitter with `aborted` and
 * `reason` as well as an AbortSignal. An AbortController and its signal (an EventTarget)
 * cost about 4 µs per request to make, listen to and unlisten here; this about a tenth.
 */
class AttemptDeadline extends EventEmitter {
  aborted = false;
  reason: unknown;
  fire(reason: unknown) {
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
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
