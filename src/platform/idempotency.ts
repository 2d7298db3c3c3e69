import { createHash } from 'node:crypto';
import { and, eq, lt, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Db } from '../db/client.js';
import { idempotencyKeys } from '../db/schema/index.js';
import { AppError } from './errors.js';
import { withTenant } from './tenancy.js';

/**
 * `Idempotency-Key` on any POST (decisions §3): the first response (status and body)
 * is stored for 24 h per organization and replayed for the same key and body; the
 * same key with another body is 422; a request whose twin is still running is 409.
 * A 5xx is not stored, so the client may retry with the same key.
 */
const TTL_MS = 24 * 3600 * 1000;
/** A claim with no response after this long belongs to a request that died; it may be taken over. */
const ABANDONED_MS = 60 * 1000;

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: { organizationId: string; key: string } | null;
  }
}

async function idempotencyPlugin(app: FastifyInstance, opts: { db: Db }) {
  const { db } = opts;
  app.decorateRequest('idempotency', null);

  app.addHook('preHandler', async (request, reply) => {
    if (request.method !== 'POST') return;
    const header = request.headers['idempotency-key'];
    const orgId = request.principal?.organizationId;
    if (header === undefined || !orgId) return;
    const key = Array.isArray(header) ? header[0] : header;
    if (!key || key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) {
      throw new AppError('VALIDATION_FAILED', 'Idempotency-Key must be 1..255 printable ASCII characters', {
        details: [{ field: 'Idempotency-Key', message: 'must be 1..255 printable ASCII characters' }],
      });
    }
    // Keys belong to whoever sent them: an API key, a device (not the member it acts for:
    // a phone retrying its key must not replay a request the office made) or a user.
    const p = request.principal;
    const principal = p?.apiKeyId ?? (p?.deviceId ? `device:${p.deviceId}` : undefined) ?? p?.userId ?? '';
    const requestHash = createHash('sha256')
      .update(`${request.method} ${request.url}\n${canonicalJson(request.body ?? null)}`)
      .digest('hex');
    const outcome = await withTenant(db, orgId, async (tx) => {
      const now = Date.now();
      await tx
        .delete(idempotencyKeys)
        .where(
          and(
            eq(idempotencyKeys.organizationId, orgId),
            eq(idempotencyKeys.key, key),
            sql`(${idempotencyKeys.createdAt} < ${new Date(now - TTL_MS)} OR (${idempotencyKeys.statusCode} IS NULL AND ${lt(idempotencyKeys.createdAt, new Date(now - ABANDONED_MS))}))`,
          ),
        );
      const inserted = await tx
        .insert(idempotencyKeys)
        .values({ organizationId: orgId, key, principal, requestHash })
        .onConflictDoNothing()
        .returning({ key: idempotencyKeys.key });
      if (inserted.length > 0) return { kind: 'claimed' as const };
      const [row] = await tx
        .select()
        .from(idempotencyKeys)
        .where(and(eq(idempotencyKeys.organizationId, orgId), eq(idempotencyKeys.key, key)));
      return { kind: 'existing' as const, row };
    });
    if (outcome.kind === 'claimed') {
      request.idempotency = { organizationId: orgId, key };
      return;
    }
    const row = outcome.row;
    if (!row) throw new AppError('CONFLICT', 'A request with this Idempotency-Key is in progress');
    if (row.requestHash !== requestHash || row.principal !== principal) {
      throw new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request');
    }
    if (row.statusCode === null || row.responseBody === null) {
      throw new AppError('CONFLICT', 'A request with this Idempotency-Key is still in progress; retry later');
    }
    reply.header('Idempotent-Replayed', 'true');
    return reply.code(row.statusCode).type('application/json; charset=utf-8').send(row.responseBody);
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const claim = request.idempotency;
    if (!claim) return payload;
    request.idempotency = null;
    const where = and(eq(idempotencyKeys.organizationId, claim.organizationId), eq(idempotencyKeys.key, claim.key));
    await withTenant(db, claim.organizationId, async (tx) => {
      if (reply.statusCode >= 500 || typeof payload !== 'string') {
        await tx.delete(idempotencyKeys).where(where);
      } else {
        await tx.update(idempotencyKeys).set({ statusCode: reply.statusCode, responseBody: payload }).where(where);
      }
    });
    return payload;
  });
}

/** JSON with object keys sorted, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are the same request. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export const idempotency = fp(idempotencyPlugin, { name: 'idempotency' });
