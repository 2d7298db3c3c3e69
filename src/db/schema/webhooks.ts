import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  doublePrecision,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';
import { ts } from './column-types.js';
import { createdAt, organizationId, updatedAt } from './columns.js';

/**
 * A receiver of webhook deliveries. Secrets are stored encrypted (AES-256-GCM,
 * key derived from AUTH_SECRET) because the worker must sign with them; see
 * src/platform/secrets.ts.
 */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    url: text('url').notNull(),
    description: text('description'),
    /** Subscribed names as given (`*`, catalog names, `workflow.<name>`). */
    events: jsonb('events').$type<string[]>().notNull(),
    active: boolean('active').notNull().default(true),
    secretEnc: text('secret_enc').notNull(),
    previousSecretEnc: text('previous_secret_enc'),
    previousSecretExpiresAt: ts('previous_secret_expires_at'),
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    deactivatedAt: ts('deactivated_at'),
    /** Optional ceiling on attempts started per second, across every worker (null: none). */
    rateLimitPerSecond: integer('rate_limit_per_second'),
    /** Token bucket behind rateLimitPerSecond, written by the claim (worker-only state). */
    rateTokens: doublePrecision('rate_tokens'),
    rateRefilledAt: ts('rate_refilled_at'),
    /** A 429/503 with Retry-After: no attempt to this endpoint before then (worker-only state). */
    pausedUntil: ts('paused_until'),
    /**
     * Deliveries claimed for this endpoint and maybe still in flight, across every worker,
     * with, position by position, the next_attempt_at each had when claimed and when that
     * claim's lease runs out. A listed delivery is in flight while its lease holds and it is
     * still in the state it was claimed in; the per-endpoint cap counts those, and no other
     * claim takes them (worker-only state, kept by the claim; drizzle/0025, 0026).
     */
    inflightIds: text('inflight_ids').array().notNull().default(sql`'{}'`),
    inflightDue: timestamp('inflight_due', { withTimezone: true, mode: 'string' }).array().notNull().default(sql`'{}'`),
    inflightUntil: timestamp('inflight_until', { withTimezone: true, mode: 'string' })
      .array()
      .notNull()
      .default(sql`'{}'`),
    /**
     * Where the next claim starts reading this endpoint's due deliveries (just after the
     * newest one the last claim took, by next_attempt_at and id), when a claim last read
     * from 250 ms before it, and when one last read from the start (worker-only state, kept
     * by the claim; drizzle/0025, 0027).
     */
    dueFrom: ts('due_from'),
    dueFromId: text('due_from_id'),
    dueMarginAt: ts('due_margin_at'),
    dueScannedAt: ts('due_scanned_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'webhook_endpoints_pkey', columns: [t.organizationId, t.id] }),
    index('webhook_endpoints_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    check('webhook_endpoints_rate_limit_positive', sql`rate_limit_per_second IS NULL OR rate_limit_per_second > 0`),
  ],
);

/**
 * One logical delivery of one event to one endpoint. Its id is the
 * X-Service-Delivery header and the body's `id`, constant across retries and
 * requeues. `body` keeps the exact bytes so every attempt sends the same payload.
 * Status: pending (no failed attempt yet) → failed (a retry is scheduled) →
 * succeeded | dead.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').notNull(),
    /** With endpointId, the key of its endpoint (one foreign key below, drizzle/0032). */
    organizationId: text('organization_id').notNull(),
    endpointId: text('endpoint_id').notNull(),
    eventId: text('event_id'),
    event: text('event').notNull(),
    body: text('body').notNull(),
    status: text('status').notNull().default('pending'),
    /** Attempts made since creation or the last requeue. */
    attemptCount: integer('attempt_count').notNull().default(0),
    /**
     * When it is due. A claim leases it on its endpoint's row (inflightIds), and a result
     * applies only while this and the status are as the claim saw them.
     */
    nextAttemptAt: ts('next_attempt_at').notNull().defaultNow(),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    lastAttemptAt: ts('last_attempt_at'),
    succeededAt: ts('succeeded_at'),
    /**
     * The successful attempt, when the worker recorded it in bulk: kept here rather than as
     * a webhook_attempts row (its time and status code are lastAttemptAt and lastStatusCode).
     * The attempt log shows it like the others.
     */
    successAttemptId: text('success_attempt_id'),
    successDurationMs: integer('success_duration_ms'),
    successResponseBody: text('success_response_body'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'webhook_deliveries_pkey', columns: [t.organizationId, t.id] }),
    // A delivery belongs to its endpoint and to that endpoint's organization; deleting
    // either (an organization deletes its endpoints) deletes it.
    foreignKey({
      name: 'webhook_deliveries_endpoint_fk',
      columns: [t.organizationId, t.endpointId],
      foreignColumns: [webhookEndpoints.organizationId, webhookEndpoints.id],
    }).onDelete('cascade'),
    index('webhook_deliveries_org_endpoint_idx').on(t.organizationId, t.endpointId, t.createdAt, t.id),
    index('webhook_deliveries_org_endpoint_status_idx').on(t.organizationId, t.endpointId, t.status, t.createdAt, t.id),
    index('webhook_deliveries_endpoint_due_idx')
      .on(t.endpointId, t.nextAttemptAt, t.id)
      .where(sql`status IN ('pending', 'failed')`),
  ],
);

/** The log of every attempt: what was sent when, and what came back (first 4 KiB). */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    deliveryId: text('delivery_id').notNull(),
    attemptedAt: ts('attempted_at').notNull(),
    statusCode: integer('status_code'),
    durationMs: integer('duration_ms').notNull(),
    error: text('error'),
    responseBody: text('response_body'),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ name: 'webhook_attempts_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'webhook_attempts_delivery_id_fk',
      columns: [t.organizationId, t.deliveryId],
      foreignColumns: [webhookDeliveries.organizationId, webhookDeliveries.id],
    }).onDelete('cascade'),
    index('webhook_attempts_org_delivery_idx').on(t.organizationId, t.deliveryId, t.attemptedAt),
  ],
);
