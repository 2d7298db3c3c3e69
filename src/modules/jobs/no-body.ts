import type { FastifyRequest } from 'fastify';

/**
 * Action routes accept no body at all (decisions §3). Fastify validates an absent
 * body against the schema as `undefined`, which an object schema refuses even
 * when marked optional, so an absent body is read as `{}` before validation.
 */
export async function noBodyAsEmpty(request: FastifyRequest): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {};
}
