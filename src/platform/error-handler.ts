import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseOutage } from '../db/outage.js';
import { isDatabaseUnavailable } from '../db/pg-errors.js';
import { drainBody } from './body-drain.js';
import { AppError, databaseUnavailable, type ErrorCode, type FieldIssue } from './errors.js';
import { allowedMethods } from './method-not-allowed.js';
import { type AjvIssue, validationDetails } from './validation-messages.js';

export { validationDetails };

export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  code: ErrorCode,
  status: number,
  message: string,
  details?: FieldIssue[],
) {
  const error: Record<string, unknown> = { message, code, requestId: request.id };
  if (details && details.length > 0) error.details = details;
  return reply.status(status).type('application/json; charset=utf-8').send({ error });
}

const FASTIFY_CODES: Record<string, { code: ErrorCode; message?: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Content-Type must be application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'VALIDATION_FAILED', message: 'Invalid Content-Length' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'VALIDATION_FAILED', message: 'Body is empty' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'VALIDATION_FAILED', message: 'Body is not valid JSON' },
};

/**
 * 413 for a body over the limit, sent once the rest of the body has been read (up to a bound,
 * src/platform/body-drain.ts), with `Connection: close`: answering while the client is still
 * writing would reset the connection under it (EPIPE) before it reads the answer.
 */
async function tooLarge(request: FastifyRequest, reply: FastifyReply) {
  reply.header('connection', 'close');
  await drainBody(request.raw);
  return sendError(request, reply, 'PAYLOAD_TOO_LARGE', 413, 'Request body is larger than 1 MiB');
}

/**
 * One error handler for the whole service: every failure leaves as
 * `{error: {message, code, requestId, details?}}`, and a 500 never carries a
 * stack trace, SQL or driver message (those go to the log with the request id).
 * A database that cannot be reached answers 503 with Retry-After on every route; it is
 * logged once per outage by `outage`, not once per request.
 */
export function installErrorHandler(app: FastifyInstance, opts: { outage?: DatabaseOutage } = {}): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    let appError = err instanceof AppError ? err : undefined;
    if (!appError && isDatabaseUnavailable(err)) {
      opts.outage?.report(err);
      appError = databaseUnavailable();
    }
    if (appError) {
      if (appError.headers) reply.headers(appError.headers);
      return sendError(request, reply, appError.code, appError.status, appError.message, appError.details);
    }
    if (err.validation) {
      const details = validationDetails(err.validation as AjvIssue[], err.validationContext);
      const first = details[0];
      const message = first ? `${first.field} ${first.message}` : 'Request is invalid';
      return sendError(request, reply, 'VALIDATION_FAILED', 400, message, details);
    }
    if (err.statusCode === 413 || err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return tooLarge(request, reply);
    const known = err.code && Object.hasOwn(FASTIFY_CODES, err.code) ? FASTIFY_CODES[err.code] : undefined;
    if (known) {
      const status = known.code === 'VALIDATION_FAILED' ? 400 : (err.statusCode ?? 400);
      return sendError(request, reply, known.code, status, known.message ?? err.message);
    }
    if (err instanceof SyntaxError || (err.statusCode === 400 && /JSON/i.test(err.message))) {
      return sendError(request, reply, 'VALIDATION_FAILED', 400, 'Body is not valid JSON');
    }
    if (err.statusCode === 415) return sendError(request, reply, 'UNSUPPORTED_MEDIA_TYPE', 415, err.message);
    if (err.statusCode === 429) return sendError(request, reply, 'RATE_LIMITED', 429, 'Too many requests');
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return sendError(request, reply, 'VALIDATION_FAILED', 400, 'Request is invalid');
    }
    request.log.error({ err }, 'unhandled error');
    return sendError(request, reply, 'INTERNAL', 500, 'Internal server error');
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] as string;
    const allow = allowedMethods(app.registeredRoutes ?? [], path);
    if (allow.length > 0) {
      reply.header('Allow', allow.join(', '));
      return sendError(
        request,
        reply,
        'METHOD_NOT_ALLOWED',
        405,
        `${request.method} is not allowed on ${path}; use ${allow.join(', ')}`,
      );
    }
    return sendError(request, reply, 'NOT_FOUND', 404, `Route ${request.method} ${path} not found`);
  });
}
