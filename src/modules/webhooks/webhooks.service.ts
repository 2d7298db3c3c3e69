import { and, asc, eq, sql } from 'drizzle-orm';
import type { Config } from '../../config.js';
import { webhookAttempts, webhookDeliveries, webhookEndpoints } from '../../db/schema/index.js';
import { deliveryBody, notifyWorkers } from '../../delivery/fanout.js';
import { registrationBlockedReason } from '../../delivery/ssrf.js';
import { AppError, type FieldIssue, invalidState, notFound } from '../../platform/errors.js';
import { isKnownEvent, TEST_EVENT } from '../../platform/events/catalog.js';
import { newId } from '../../platform/ids.js';
import { ownedRows } from '../../platform/owned-rows.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import { newWebhookSecret, type SecretBox } from '../../platform/secrets.js';
import type { Ctx } from '../../platform/tenancy.js';

/** Spec Part 8: after a rotation the previous secret keeps signing for 24 hours. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

type EndpointRow = typeof webhookEndpoints.$inferSelect;
type DeliveryRow = typeof webhookDeliveries.$inferSelect;

const endpointView = (r: EndpointRow, now = new Date()) => ({
  id: r.id,
  url: r.url,
  events: r.events,
  description: r.description,
  active: r.active,
  consecutiveFailures: r.consecutiveFailures,
  deactivatedAt: r.deactivatedAt,
  previousSecretExpiresAt:
    r.previousSecretEnc && r.previousSecretExpiresAt && r.previousSecretExpiresAt > now
      ? r.previousSecretExpiresAt
      : null,
  rateLimitPerSecond: r.rateLimitPerSecond,
  pausedUntil: r.pausedUntil && r.pausedUntil > now ? r.pausedUntil : null,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

const deliveryView = (r: DeliveryRow) => ({
  id: r.id,
  endpointId: r.endpointId,
  event: r.event,
  eventId: r.eventId,
  status: r.status as 'pending' | 'succeeded' | 'failed' | 'dead',
  attempts: r.attemptCount,
  nextAttemptAt: r.status === 'pending' || r.status === 'failed' ? r.nextAttemptAt : null,
  lastAttemptAt: r.lastAttemptAt,
  lastStatusCode: r.lastStatusCode,
  lastError: r.lastError,
  succeededAt: r.succeededAt,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

/**
 * Validates a receiver URL before anything is written: parseable, http(s) only, no
 * credentials in it, https unless private targets are allowed, and not pointing at a
 * blocked address (literal IP, localhost, or a name resolving to one). Runs outside
 * the transaction because it may wait on DNS.
 */
export async function checkWebhookUrl(config: Config, raw: string): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('url', 'is not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('url', 'must be an https URL');
  if (url.username || url.password) throw invalid('url', 'must not contain credentials');
  if (!config.webhookAllowPrivateTargets) {
    if (url.protocol !== 'https:') throw invalid('url', 'must use https');
    const reason = await registrationBlockedReason(url);
    if (reason)
      throw invalid('url', `points at a blocked address (${reason}); webhooks must target the public internet`);
  }
  url.hash = '';
  return url.toString();
}

/** Rejects the whole list when any name is unknown (spec 6.1), naming every bad entry. */
export function checkEvents(events: readonly string[]): string[] {
  if (events.length === 0) throw invalid('events', 'must name at least one event');
  const issues: FieldIssue[] = [];
  const unknown: string[] = [];
  events.forEach((name, i) => {
    if (name === '*' || isKnownEvent(name)) return;
    unknown.push(name);
    issues.push({ field: `events[${i}]`, message: `unknown event "${name}"` });
  });
  if (unknown.length > 0) {
    throw new AppError(
      'VALIDATION_FAILED',
      `events: unknown event name(s): ${unknown.join(', ')}; nothing was registered`,
      {
        details: issues,
      },
    );
  }
  return [...new Set(events)];
}

function invalid(field: string, message: string) {
  return new AppError('VALIDATION_FAILED', `${field}: ${message}`, { details: [{ field, message }] });
}

const requireEndpoint = ownedRows(webhookEndpoints, 'Webhook endpoint').find;

export async function createEndpoint(
  ctx: Ctx,
  box: SecretBox,
  input: {
    url: string;
    events: string[];
    description?: string | null | undefined;
    rateLimitPerSecond?: number | null | undefined;
  },
) {
  const secret = newWebhookSecret();
  const [row] = await ctx.tx
    .insert(webhookEndpoints)
    .values({
      id: newId('whk'),
      organizationId: ctx.organizationId,
      url: input.url,
      events: input.events,
      description: input.description ?? null,
      rateLimitPerSecond: input.rateLimitPerSecond ?? null,
      secretEnc: box.seal(secret),
    })
    .returning();
  const view = endpointView(row as EndpointRow);
  return { ...view, secret };
}

export async function listEndpoints(ctx: Ctx, page: Page) {
  const where = eq(webhookEndpoints.organizationId, ctx.organizationId);
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, webhookEndpoints, where, page);
  return { rows: rows.map((r) => endpointView(r)), ...more };
}

export async function getEndpoint(ctx: Ctx, id: string) {
  return endpointView(await requireEndpoint(ctx, id));
}

export async function updateEndpoint(
  ctx: Ctx,
  id: string,
  patch: {
    url?: string | undefined;
    events?: string[] | undefined;
    description?: string | null | undefined;
    rateLimitPerSecond?: number | null | undefined;
  },
) {
  await requireEndpoint(ctx, id);
  const set: Partial<typeof webhookEndpoints.$inferInsert> = { updatedAt: new Date() };
  if (patch.url !== undefined) set.url = patch.url;
  if (patch.events !== undefined) set.events = patch.events;
  if (patch.description !== undefined) set.description = patch.description;
  if (patch.rateLimitPerSecond !== undefined) {
    set.rateLimitPerSecond = patch.rateLimitPerSecond;
    // A new rate starts with a full bucket of the new size.
    set.rateTokens = null;
    set.rateRefilledAt = null;
  }
  const [row] = await ctx.tx
    .update(webhookEndpoints)
    .set(set)
    .where(and(eq(webhookEndpoints.organizationId, ctx.organizationId), eq(webhookEndpoints.id, id)))
    .returning();
  return endpointView(row as EndpointRow);
}

export async function deleteEndpoint(ctx: Ctx, id: string) {
  const rows = await ctx.tx
    .delete(webhookEndpoints)
    .where(and(eq(webhookEndpoints.organizationId, ctx.organizationId), eq(webhookEndpoints.id, id)))
    .returning({ id: webhookEndpoints.id });
  if (rows.length === 0) throw notFound('Webhook endpoint');
}

/**
 * New secret; the current one becomes the previous one and keeps signing for 24 h.
 * Rotating again inside that window drops the older previous secret at once (only
 * the secret being replaced now stays valid), per spec Part 8.
 */
export async function rotateSecret(ctx: Ctx, box: SecretBox, id: string) {
  const current = await requireEndpoint(ctx, id, true);
  const secret = newWebhookSecret();
  const now = new Date();
  const expires = new Date(now.getTime() + ROTATION_OVERLAP_MS);
  await ctx.tx
    .update(webhookEndpoints)
    .set({
      secretEnc: box.seal(secret),
      previousSecretEnc: current.secretEnc,
      previousSecretExpiresAt: expires,
      updatedAt: now,
    })
    .where(and(eq(webhookEndpoints.organizationId, ctx.organizationId), eq(webhookEndpoints.id, id)));
  return { id, secret, previousSecretExpiresAt: expires };
}

/** Re-enables a deactivated endpoint and resets its failure counter (idempotent on an active one). */
export async function enableEndpoint(ctx: Ctx, id: string) {
  await requireEndpoint(ctx, id);
  const [row] = await ctx.tx
    .update(webhookEndpoints)
    .set({ active: true, consecutiveFailures: 0, deactivatedAt: null, updatedAt: new Date() })
    .where(and(eq(webhookEndpoints.organizationId, ctx.organizationId), eq(webhookEndpoints.id, id)))
    .returning();
  await notifyWorkers(ctx.tx);
  return endpointView(row as EndpointRow);
}

/** Queues one `webhook.test` delivery (outside the catalog, so only this route sends it). */
export async function sendTestDelivery(ctx: Ctx, id: string) {
  const endpoint = await requireEndpoint(ctx, id);
  if (!endpoint.active) throw invalidState('The endpoint is deactivated; enable it before sending a test');
  const deliveryId = newId('dlv');
  const now = new Date();
  const [row] = await ctx.tx
    .insert(webhookDeliveries)
    .values({
      id: deliveryId,
      organizationId: ctx.organizationId,
      endpointId: id,
      eventId: null,
      event: TEST_EVENT,
      body: deliveryBody(deliveryId, TEST_EVENT, now, ctx.organizationId, {
        webhookId: id,
        message: 'This is a test delivery from your webhook settings.',
      }),
      createdAt: now,
    })
    .returning();
  await notifyWorkers(ctx.tx);
  return deliveryView(row as DeliveryRow);
}

const STATUSES = ['pending', 'succeeded', 'failed', 'dead'] as const;

export async function listDeliveries(
  ctx: Ctx,
  endpointId: string,
  filter: { status?: (typeof STATUSES)[number] | undefined },
  page: Page,
) {
  await requireEndpoint(ctx, endpointId);
  const where = and(
    eq(webhookDeliveries.organizationId, ctx.organizationId),
    eq(webhookDeliveries.endpointId, endpointId),
    filter.status ? eq(webhookDeliveries.status, filter.status) : undefined,
  );
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, webhookDeliveries, where, page);
  return { rows: rows.map(deliveryView), ...more };
}

const requireDelivery = ownedRows(webhookDeliveries, 'Webhook delivery').find;

export async function getDelivery(ctx: Ctx, id: string) {
  const row = await requireDelivery(ctx, id);
  const attempts = await ctx.tx
    .select()
    .from(webhookAttempts)
    .where(and(eq(webhookAttempts.organizationId, ctx.organizationId), eq(webhookAttempts.deliveryId, id)))
    .orderBy(asc(webhookAttempts.attemptedAt), asc(webhookAttempts.id));
  const log = attempts.map((a) => ({
    id: a.id,
    attemptedAt: a.attemptedAt,
    statusCode: a.statusCode,
    durationMs: a.durationMs,
    error: a.error,
    responseBody: a.responseBody,
  }));
  const success = successAttempt(row);
  if (success) log.push(success);
  log.sort((a, b) => a.attemptedAt.getTime() - b.attemptedAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { ...deliveryView(row), payload: JSON.parse(row.body) as unknown, attemptLog: log };
}

/** The successful attempt the worker kept on the delivery row (drizzle/0029), as a log entry. */
function successAttempt(row: DeliveryRow) {
  if (row.successAttemptId === null || row.lastAttemptAt === null) return null;
  return {
    id: row.successAttemptId,
    attemptedAt: row.lastAttemptAt,
    statusCode: row.lastStatusCode,
    durationMs: row.successDurationMs ?? 0,
    error: null,
    responseBody: row.successResponseBody,
  };
}

/**
 * Dead → pending with a fresh attempt budget (same delivery id, so receivers still
 * deduplicate) and the endpoint's failure counter reset. A delivery of a deactivated
 * endpoint waits, pending, until the endpoint is enabled again.
 */
export async function requeueDelivery(ctx: Ctx, id: string) {
  const row = await requireDelivery(ctx, id, true);
  if (row.status !== 'dead') throw invalidState(`Only dead deliveries can be requeued (this one is ${row.status})`);
  const [updated] = await ctx.tx
    .update(webhookDeliveries)
    .set({
      status: 'pending',
      attemptCount: 0,
      nextAttemptAt: sql`now()`,
      updatedAt: new Date(),
    })
    .where(and(eq(webhookDeliveries.organizationId, ctx.organizationId), eq(webhookDeliveries.id, id)))
    .returning();
  await ctx.tx
    .update(webhookEndpoints)
    .set({ consecutiveFailures: 0, updatedAt: new Date() })
    .where(and(eq(webhookEndpoints.organizationId, ctx.organizationId), eq(webhookEndpoints.id, row.endpointId)));
  await notifyWorkers(ctx.tx);
  return deliveryView(updated as DeliveryRow);
}
