/**
 * One catalogue of error codes and their HTTP statuses (decisions.md §3).
 * Services throw AppError; the error handler turns it into the error body.
 */
export const ERROR_STATUS = {
  VALIDATION_FAILED: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  PLAN_REQUIRED: 403,
  NO_ACTIVE_ORGANIZATION: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  INVALID_STATE: 409,
  CONFLICT: 409,
  /** A ledger posting dated on or before the organization's closed date (operations.md §11). */
  PERIOD_CLOSED: 409,
  /** The resource existed but is gone for good (an export archive past its expiry). */
  GONE: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface FieldIssue {
  field: string;
  message: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: FieldIssue[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { details?: FieldIssue[]; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = opts.details;
    this.headers = opts.headers;
  }
}

export const notFound = (what: string) => new AppError('NOT_FOUND', `${what} not found`);

/** A 400 naming one field, for rules JSON Schema cannot express (date order, references). */
export const invalidField = (field: string, message: string) =>
  new AppError('VALIDATION_FAILED', `${field}: ${message}`, { details: [{ field, message }] });

export const invalidState = (message: string) => new AppError('INVALID_STATE', message);

/** Seconds a client is asked to wait before retrying while the database is unreachable. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/**
 * What every route answers while the database cannot be reached (connection refused or
 * reset, pool time-out, shutdown, too many connections, a serialization failure that
 * gave up): 503 with Retry-After, so clients retry rather than sign users out (401) or
 * disable a key. The error handler maps classified driver errors to this (one place).
 */
export const databaseUnavailable = () =>
  new AppError('SERVICE_UNAVAILABLE', 'The database is temporarily unreachable; retry shortly', {
    headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
  });
