import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode, type FieldIssue } from './errors.js';

interface AjvIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Turns Ajv's errors into one `{field, message}` per problem, in words a client can act on. */
export function validationDetails(issues: AjvIssue[], context: string | undefined): FieldIssue[] {
  const seen = new Set<string>();
  const out: FieldIssue[] = [];
  for (const issue of issues) {
    let field = issue.instancePath.replace(/^\//, '').replace(/\//g, '.');
    let message = issue.message ?? 'is invalid';
    if (issue.keyword === 'required') {
      const missing = String(issue.params.missingProperty);
      field = field ? `${field}.${missing}` : missing;
      message = 'is required';
    } else if (issue.keyword === 'additionalProperties') {
      const extra = String(issue.params.additionalProperty);
      field = field ? `${field}.${extra}` : extra;
      message = 'is not an accepted field';
    } else if (issue.keyword === 'enum') {
      const allowed = (issue.params.allowedValues as unknown[]) ?? [];
      message = `must be one of: ${allowed.join(', ')}`;
    } else if (issue.keyword === 'format') {
      message = `must be a valid ${String(issue.params.format)}`;
    } else if (issue.keyword === 'anyOf' || issue.keyword === 'oneOf') {
      message = 'has an invalid value';
    }
    if (!field) field = context === 'body' ? '(body)' : `(${context ?? 'request'})`;
    const key = `${field}|${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field, message });
  }
  return out;
}

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
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'PAYLOAD_TOO_LARGE', message: 'Request body is larger than 1 MiB' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'VALIDATION_FAILED', message: 'Body is empty' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'VALIDATION_FAILED', message: 'Body is not valid JSON' },
};

/**
 * One error handler for the whole service: every failure leaves as
 * `{error: {message, code, requestId, details?}}`, and a 500 never carries a
 * stack trace, SQL or driver message (those go to the log with the request id).
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof AppError) {
      if (err.headers) reply.headers(err.headers);
      return sendError(request, reply, err.code, err.status, err.message, err.details);
    }
    if (err.validation) {
      const details = validationDetails(err.validation as AjvIssue[], err.validationContext);
      const first = details[0];
      const message = first ? `${first.field} ${first.message}` : 'Request is invalid';
      return sendError(request, reply, 'VALIDATION_FAILED', 400, message, details);
    }
    const known = err.code ? FASTIFY_CODES[err.code] : undefined;
    if (known) {
      const status = known.code === 'VALIDATION_FAILED' ? 400 : (err.statusCode ?? 400);
      return sendError(request, reply, known.code, status, known.message ?? err.message);
    }
    if (err instanceof SyntaxError || (err.statusCode === 400 && /JSON/i.test(err.message))) {
      return sendError(request, reply, 'VALIDATION_FAILED', 400, 'Body is not valid JSON');
    }
    if (err.statusCode === 413) return sendError(request, reply, 'PAYLOAD_TOO_LARGE', 413, 'Request body is too large');
    if (err.statusCode === 415) return sendError(request, reply, 'UNSUPPORTED_MEDIA_TYPE', 415, err.message);
    if (err.statusCode === 429) return sendError(request, reply, 'RATE_LIMITED', 429, 'Too many requests');
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return sendError(request, reply, 'VALIDATION_FAILED', 400, 'Request is invalid');
    }
    request.log.error({ err }, 'unhandled error');
    return sendError(request, reply, 'INTERNAL', 500, 'Internal server error');
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(request, reply, 'NOT_FOUND', 404, `Route ${request.method} ${request.url.split('?')[0]} not found`),
  );
}
