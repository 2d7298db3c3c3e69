/** PostgreSQL SQLSTATE of a failed query, whichever driver raised it (Drizzle wraps the driver error in `cause`). */
export function sqlStateOf(err: unknown): string | undefined {
  let e = err as { code?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; e && depth < 5; depth++) {
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
    e = e.cause as typeof e;
  }
  return undefined;
}

/** 23503: a row is still referenced by another table's foreign key. */
export const isForeignKeyViolation = (err: unknown) => sqlStateOf(err) === '23503';

/**
 * SQLSTATEs that say the database (not the request) failed: the client should retry
 * later. Class 08 (connection exceptions) is matched as a class below.
 */
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown: the server is stopping (or a DBA terminated the backend)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or shutting down
  '53300', // too_many_connections
  '53000', // insufficient_resources
  '40001', // serialization_failure, reaching here only after any retry gave up
  '40P01', // deadlock_detected, likewise
]);

/** Socket errors of the driver's connection to the database. */
const UNAVAILABLE_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
]);

/**
 * node-postgres reports some failures with a message only: pg-pool's connection time-out,
 * a server that closed the socket mid-query, a client that broke earlier, a pool closed
 * by shutdown.
 */
const UNAVAILABLE_MESSAGES =
  /^(timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|Cannot use a pool after calling end|Query read timeout)/;

/**
 * True when `err` means "the database cannot be used right now" rather than "this
 * request is wrong": the error catalogue answers 503 SERVICE_UNAVAILABLE with
 * Retry-After for these (src/platform/error-handler.ts), never 401/404/500. Walks the
 * `cause` chain (Drizzle and Better Auth wrap the driver's error) and AggregateError's
 * `errors` (a refused connection to a host with several addresses). Messages are matched
 * at their start only: Drizzle's "Failed query: …" carries the request's parameters.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const seen = new Set<unknown>();
  const visit = (e: unknown, depth: number): boolean => {
    if (!e || typeof e !== 'object' || depth > 6 || seen.has(e)) return false;
    seen.add(e);
    const { code, message, cause, errors } = e as {
      code?: unknown;
      message?: unknown;
      cause?: unknown;
      errors?: unknown;
    };
    if (typeof code === 'string') {
      if (UNAVAILABLE_SOCKET_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code)) return true;
      if (/^08[0-9A-Z]{3}$/.test(code)) return true;
    }
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message)) return true;
    if (Array.isArray(errors) && errors.some((x) => visit(x, depth + 1))) return true;
    return visit(cause, depth + 1);
  };
  return visit(err, 0);
}
