import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../db/client.js';
import { asPlatform } from '../platform/cross-tenant.js';
import { newId } from '../platform/ids.js';
import type { AttemptResult } from './delivery.js';

/**
 * Spec 3.6: an endpoint is deactivated when its consecutive failed deliveries reach 10.
 * A delivery fails when its last attempt fails and it becomes dead; a failed attempt
 * with retries left does not count, and any successful attempt resets the count.
 */
export const MAX_CONSECUTIVE_FAILURES = 10;

export interface ClaimedDelivery {
  id: string;
  organizationId: string;
  endpointId: string;
  event: string;
  body: string;
  attemptCount: number;
  url: string;
  secretEnc: string;
  previousSecretEnc: string | null;
  previousValid: boolean;
  claimToken: string;
}

export interface ClaimOptions {
  limit: number;
  leaseMs: number;
  /**
   * Deliveries of one endpoint in flight at once across EVERY worker (counted in the
   * database: claimed rows whose result is not written yet), so a receiver never sees
   * more than this many requests at once however many workers run.
   */
  perEndpoint: number;
}

/*
 * The worker's queries are platform queries across tenants: they run as the
 * connecting database user, not as the RLS-restricted application role, because one
 * worker serves every organization. Tenant-facing code never calls them.
 */

/** A due delivery that no live lease holds. */
const DUE = sql`d.status IN ('pending', 'failed') AND d.next_attempt_at <= now()
  AND (d.locked_until IS NULL OR d.locked_until < now())`;
/** Deliveries of endpoint `e` in flight (claimed, lease live, result not yet written). */
const IN_FLIGHT = sql`(SELECT count(*) FROM webhook_deliveries f
  WHERE f.endpoint_id = e.id AND f.claim_token IS NOT NULL AND f.locked_until > now())::int`;
/** Tokens in `e`'s rate bucket now (capacity = rate, refilled at rate per second); null without a rate. */
const TOKENS = sql`CASE WHEN e.rate_limit_per_second IS NULL THEN NULL ELSE least(
  e.rate_limit_per_second::float8,
  COALESCE(e.rate_tokens, e.rate_limit_per_second::float8)
    + e.rate_limit_per_second * extract(epoch FROM now() - COALESCE(e.rate_refilled_at, now()))) END`;
/** An endpoint that may be sent to now: active, not paused by a Retry-After. */
const SENDABLE = sql`e.active AND (e.paused_until IS NULL OR e.paused_until <= now())`;

/**
 * Claims due deliveries fairly, with FOR UPDATE SKIP LOCKED and a lease (locked_until):
 * two workers never claim the same delivery, and a delivery whose worker died is
 * claimed again once its lease has expired. All times come from the database clock.
 *
 * Fairness. The claim walks the ENDPOINTS that have due work, not the oldest due
 * deliveries: a backlog of one endpoint is one candidate like any other, so however
 * deep it is every other due endpoint gets its turn in the same claim. Endpoints are
 * dealt round-robin over organizations (each organization's first endpoint before any
 * organization's second, random order among equals), so an organization with 100
 * endpoints gets no more turns than one with 1 while both have work; then each chosen
 * endpoint gives its oldest due deliveries up to its room, again dealt round-robin
 * within the organization. Each endpoint probe is one look-up in
 * webhook_deliveries_endpoint_due_idx.
 *
 * Caps across workers. The claim is a transaction of two statements. The first locks
 * the chosen endpoint rows (FOR NO KEY UPDATE SKIP LOCKED: another worker claiming the
 * same endpoint skips it, nothing waits). The second starts a fresh snapshot after the
 * locks are held, so it sees every claim that committed before, and counts each
 * endpoint's deliveries in flight (all workers) and its rate tokens exactly: two workers
 * can never both fill the same room. Rate tokens spent are written back on the locked row.
 */
export async function claimDeliveries(db: Db, opts: ClaimOptions): Promise<ClaimedDelivery[]> {
  if (opts.limit <= 0) return [];
  return asPlatform(db, async (tx) => {
    const locked = await tx.execute(sql`
      SELECT e.id FROM webhook_endpoints e
      WHERE e.id IN (
        SELECT t.id FROM (
          SELECT e.id, row_number() OVER (PARTITION BY e.organization_id ORDER BY random()) AS turn
          FROM webhook_endpoints e
          WHERE ${SENDABLE}
            AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND ${DUE})
            AND ${IN_FLIGHT} < ${opts.perEndpoint}
            AND COALESCE(${TOKENS} >= 1, true)
        ) t
        ORDER BY t.turn, random()
        LIMIT ${opts.limit}
      )
      FOR NO KEY UPDATE SKIP LOCKED`);
    const ids = rowsOf<{ id: string }>(locked).map((r) => r.id);
    if (ids.length === 0) return [];
    return claimFromLocked(tx, ids, opts);
  });
}

async function claimFromLocked(db: Db, endpointIds: string[], opts: ClaimOptions): Promise<ClaimedDelivery[]> {
  const token = randomUUID();
  const result = await db.execute(sql`
    WITH eps AS (
      SELECT e.id, e.organization_id, ${TOKENS} AS tokens, ${opts.perEndpoint} - ${IN_FLIGHT} AS free
      FROM webhook_endpoints e
      WHERE e.id = ANY(${sql.param(endpointIds)}::text[]) AND ${SENDABLE}
    ), room AS (
      SELECT id, organization_id, tokens, greatest(0, least(free, COALESCE(floor(tokens)::int, free))) AS n FROM eps
    ), picks AS (
      SELECT p.id, r.organization_id, p.rn
      FROM room r CROSS JOIN LATERAL (
        SELECT d.id, row_number() OVER (ORDER BY d.next_attempt_at, d.id) AS rn
        FROM webhook_deliveries d
        WHERE d.endpoint_id = r.id AND ${DUE}
        ORDER BY d.next_attempt_at, d.id
        LIMIT r.n
      ) p
    ), chosen AS (
      SELECT s.id FROM (
        SELECT id, row_number() OVER (PARTITION BY organization_id ORDER BY rn, random()) AS seq FROM picks
      ) s
      ORDER BY s.seq, random()
      LIMIT ${opts.limit}
    ), due AS (
      SELECT d.id FROM webhook_deliveries d
      WHERE d.id IN (SELECT id FROM chosen) AND ${DUE}
      FOR UPDATE SKIP LOCKED
    ), claimed AS (
      UPDATE webhook_deliveries d
      SET locked_until = now() + make_interval(secs => ${opts.leaseMs}::double precision / 1000),
          claim_token = ${token}
      FROM due, webhook_endpoints e
      WHERE d.id = due.id AND e.id = d.endpoint_id
      RETURNING d.id, d.organization_id, d.endpoint_id, d.event, d.body, d.attempt_count, e.url, e.secret_enc,
                e.previous_secret_enc,
                (e.previous_secret_expires_at IS NOT NULL AND e.previous_secret_expires_at > now()) AS previous_valid
    ), spent AS (
      UPDATE webhook_endpoints e
      SET rate_tokens = r.tokens - c.n, rate_refilled_at = now()
      FROM room r, (SELECT endpoint_id, count(*) AS n FROM claimed GROUP BY endpoint_id) c
      WHERE e.id = r.id AND c.endpoint_id = r.id AND r.tokens IS NOT NULL
    )
    SELECT * FROM claimed`);
  return rowsOf<Record<string, unknown>>(result).map((r) => ({
    id: r.id as string,
    organizationId: r.organization_id as string,
    endpointId: r.endpoint_id as string,
    event: r.event as string,
    body: r.body as string,
    attemptCount: Number(r.attempt_count),
    url: r.url as string,
    secretEnc: r.secret_enc as string,
    previousSecretEnc: (r.previous_secret_enc as string | null) ?? null,
    previousValid: r.previous_valid === true,
    claimToken: token,
  }));
}

export interface RecordOutcome {
  /** False when the claim was lost (lease expired and taken, endpoint deleted): only the log was written. */
  applied: boolean;
  /** `deferred`: a 429/503 with Retry-After put the delivery back without using up an attempt. */
  status: 'succeeded' | 'failed' | 'dead' | 'deferred' | null;
  endpointDeactivated: boolean;
}

/**
 * Records one attempt in a single statement (atomic, one round trip): the attempt
 * log; the delivery's next state (succeeded; failed with the next retry time; dead
 * once the schedule is used up); the endpoint's count of consecutive failed
 * deliveries (reset on success, one more when this attempt leaves the delivery dead);
 * and, when that count reaches 10, deactivation of the endpoint with its other
 * pending deliveries turned dead.
 */
export async function recordAttempt(
  db: Db,
  claim: ClaimedDelivery,
  result: AttemptResult,
  retryScheduleMs: readonly number[],
): Promise<RecordOutcome> {
  if (!result.ok && result.retryAfterMs != null) return recordDeferral(db, claim, result, result.retryAfterMs);
  const attemptNumber = claim.attemptCount + 1;
  const exhausted = attemptNumber >= retryScheduleMs.length + 1;
  const delayMs = exhausted ? 0 : (retryScheduleMs[attemptNumber - 1] ?? 0);
  const ok = result.ok;
  const res = await db.execute(sql`
    WITH mine AS (
      SELECT id FROM webhook_deliveries WHERE id = ${claim.id} AND claim_token = ${claim.claimToken}
    ), log AS (
      INSERT INTO webhook_attempts (id, organization_id, delivery_id, attempted_at, status_code, duration_ms, error, response_body)
      SELECT ${newId('wha')}, ${claim.organizationId}, ${claim.id}, ${result.attemptedAt.toISOString()}::timestamptz,
             ${result.statusCode}::int, ${result.durationMs}::int, ${result.error}::text, ${result.responseBody}::text
      WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE id = ${claim.id})
    ), ep AS (
      UPDATE webhook_endpoints
      SET consecutive_failures = CASE WHEN ${ok}::boolean THEN 0 ELSE consecutive_failures + 1 END,
          active = CASE WHEN NOT ${ok}::boolean AND consecutive_failures + 1 >= ${MAX_CONSECUTIVE_FAILURES}
                        THEN false ELSE active END,
          deactivated_at = CASE WHEN NOT ${ok}::boolean AND active
                                 AND consecutive_failures + 1 >= ${MAX_CONSECUTIVE_FAILURES}
                                THEN now() ELSE deactivated_at END,
          updated_at = now()
      WHERE id = ${claim.endpointId} AND EXISTS (SELECT 1 FROM mine)
        -- A success on a healthy endpoint leaves its row alone: it is every delivery's
        -- hot row, and rewriting it per delivery serialises the whole engine on one lock.
        -- A failure counts only when it kills the delivery (retries used up), and only
        -- while the endpoint is active: an attempt that was in flight when the endpoint
        -- was deactivated does not push the count past 10.
        AND CASE WHEN ${ok}::boolean THEN consecutive_failures <> 0 ELSE ${exhausted}::boolean AND active END
      RETURNING id, active
    ), was AS (
      SELECT active FROM webhook_endpoints WHERE id = ${claim.endpointId}
    ), self AS (
      UPDATE webhook_deliveries
      SET status = CASE WHEN ${ok}::boolean THEN 'succeeded'
                        WHEN ${exhausted}::boolean OR EXISTS (SELECT 1 FROM ep WHERE NOT ep.active)
                             OR EXISTS (SELECT 1 FROM was WHERE NOT was.active) THEN 'dead'
                        ELSE 'failed' END,
          attempt_count = attempt_count + 1,
          next_attempt_at = CASE WHEN ${ok}::boolean OR ${exhausted}::boolean THEN next_attempt_at
                                 ELSE now() + make_interval(secs => ${delayMs}::double precision / 1000) END,
          locked_until = NULL,
          claim_token = NULL,
          last_status_code = ${result.statusCode}::int,
          last_error = ${result.error}::text,
          last_attempt_at = ${result.attemptedAt.toISOString()}::timestamptz,
          succeeded_at = CASE WHEN ${ok}::boolean THEN now() ELSE NULL END,
          updated_at = now()
      -- The claim is checked again on the row as it is when locked: a deactivation that
      -- committed meanwhile has turned it dead and dropped the claim, and that stands.
      WHERE id IN (SELECT id FROM mine) AND claim_token = ${claim.claimToken}
      RETURNING status
    ), dead AS (
      UPDATE webhook_deliveries
      SET status = 'dead', locked_until = NULL, claim_token = NULL, updated_at = now(),
          last_error = COALESCE(last_error, 'Endpoint deactivated after ${sql.raw(String(MAX_CONSECUTIVE_FAILURES))} consecutive failed deliveries')
      WHERE organization_id = ${claim.organizationId}
        AND endpoint_id IN (SELECT id FROM ep WHERE NOT active)
        AND status IN ('pending', 'failed') AND id <> ${claim.id}
      RETURNING id
    )
    SELECT (SELECT status FROM self) AS status,
           (SELECT count(*) FROM dead)::int AS killed,
           COALESCE((SELECT NOT active FROM ep), false) AS deactivated`);
  const [row] = rowsOf<{ status: string | null; deactivated: boolean }>(res);
  return {
    applied: row?.status != null,
    status: (row?.status as RecordOutcome['status']) ?? null,
    endpointDeactivated: row?.deactivated === true,
  };
}

/**
 * The common case in bulk: successful attempts, written in one statement (attempt log
 * rows, delivery rows → succeeded, failure counters of the touched endpoints reset
 * where they are not already zero). Returns the ids whose claim was still held.
 */
export async function recordSuccesses(
  db: Db,
  items: ReadonlyArray<{ claim: ClaimedDelivery; result: AttemptResult }>,
): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  // One array per column (unnest): the statement has nine parameters whatever the batch
  // size, so building it costs next to nothing next to a VALUES list of 9 × n cells.
  const col = <T>(f: (item: (typeof items)[number]) => T) => sql.param(items.map(f));
  const res = await db.execute(sql`
    WITH input (id, token, org, endpoint_id, attempt_id, attempted_at, status_code, duration_ms, response_body) AS (
      SELECT * FROM unnest(${col((i) => i.claim.id)}::text[], ${col((i) => i.claim.claimToken)}::text[],
                           ${col((i) => i.claim.organizationId)}::text[], ${col((i) => i.claim.endpointId)}::text[],
                           ${col(() => newId('wha'))}::text[], ${col((i) => i.result.attemptedAt.toISOString())}::timestamptz[],
                           ${col((i) => i.result.statusCode)}::int[], ${col((i) => i.result.durationMs)}::int[],
                           ${col((i) => i.result.responseBody)}::text[])
    ), log AS (
      INSERT INTO webhook_attempts (id, organization_id, delivery_id, attempted_at, status_code, duration_ms, error, response_body)
      SELECT i.attempt_id, i.org, i.id, i.attempted_at, i.status_code, i.duration_ms, NULL, i.response_body
      FROM input i WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = i.id)
    ), upd AS (
      UPDATE webhook_deliveries d
      SET status = 'succeeded', attempt_count = d.attempt_count + 1, locked_until = NULL, claim_token = NULL,
          last_status_code = i.status_code, last_error = NULL, last_attempt_at = i.attempted_at,
          succeeded_at = now(), updated_at = now()
      FROM input i
      WHERE d.id = i.id AND d.claim_token = i.token
      RETURNING d.id, d.endpoint_id
    ), ep AS (
      UPDATE webhook_endpoints SET consecutive_failures = 0, updated_at = now()
      WHERE id IN (SELECT endpoint_id FROM upd) AND consecutive_failures <> 0
    )
    SELECT id FROM upd`);
  return new Set(rowsOf<{ id: string }>(res).map((r) => r.id));
}

/**
 * The receiver answered 429 or 503 with Retry-After: it is alive and asking for less.
 * One statement: the attempt is logged; the delivery goes back to the queue due after
 * the delay with its attempt count and status unchanged (the retry schedule is not used
 * up and the failure counter is not touched); and the endpoint is paused until then
 * (paused_until, never moved earlier), so no worker sends it anything before the delay
 * is over. A receiver that keeps answering so keeps its deliveries waiting, each
 * deferral at most 1 h; every one is in the attempt log.
 */
export async function recordDeferral(
  db: Db,
  claim: ClaimedDelivery,
  result: AttemptResult,
  delayMs: number,
): Promise<RecordOutcome> {
  const until = sql`now() + make_interval(secs => ${delayMs}::double precision / 1000)`;
  const error = `${result.error ?? `HTTP ${result.statusCode}`}; Retry-After ${Math.round(delayMs / 1000)} s: deferred, attempt not counted`;
  const res = await db.execute(sql`
    WITH log AS (
      INSERT INTO webhook_attempts (id, organization_id, delivery_id, attempted_at, status_code, duration_ms, error, response_body)
      SELECT ${newId('wha')}, ${claim.organizationId}, ${claim.id}, ${result.attemptedAt.toISOString()}::timestamptz,
             ${result.statusCode}::int, ${result.durationMs}::int, ${error}::text, ${result.responseBody}::text
      WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE id = ${claim.id})
    ), self AS (
      UPDATE webhook_deliveries
      SET next_attempt_at = ${until}, locked_until = NULL, claim_token = NULL,
          last_status_code = ${result.statusCode}::int, last_error = ${error}::text,
          last_attempt_at = ${result.attemptedAt.toISOString()}::timestamptz, updated_at = now()
      WHERE id = ${claim.id} AND claim_token = ${claim.claimToken}
      RETURNING endpoint_id
    ), pause AS (
      UPDATE webhook_endpoints
      SET paused_until = GREATEST(COALESCE(paused_until, now()), ${until})
      WHERE id IN (SELECT endpoint_id FROM self)
    )
    SELECT count(*)::int AS n FROM self`);
  const [row] = rowsOf<{ n: number }>(res);
  const applied = Number(row?.n ?? 0) > 0;
  return { applied, status: applied ? 'deferred' : null, endpointDeactivated: false };
}
