import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../db/client.js';
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
  /** At most this many deliveries of one endpoint per claim, so one endpoint cannot fill a batch. */
  perEndpoint: number;
  /** Endpoints this worker already has enough deliveries in flight for. */
  busyEndpoints: readonly string[];
}

/*
 * The worker's queries are platform queries across tenants: they run as the
 * connecting database user, not as the RLS-restricted application role, because one
 * worker serves every organization. Tenant-facing code never calls them.
 */

/**
 * Claims due deliveries with FOR UPDATE SKIP LOCKED and a lease (locked_until): two
 * workers never claim the same delivery, and a delivery whose worker died is claimed
 * again once its lease has expired. All times come from the database clock.
 */
export async function claimDeliveries(db: Db, opts: ClaimOptions): Promise<ClaimedDelivery[]> {
  if (opts.limit <= 0) return [];
  const token = randomUUID();
  const busy = opts.busyEndpoints.join(',');
  const result = await db.execute(sql`
    WITH candidates AS (
      SELECT d.id, d.endpoint_id, d.next_attempt_at
      FROM webhook_deliveries d
      WHERE d.status IN ('pending', 'failed') AND d.next_attempt_at <= now()
        AND (d.locked_until IS NULL OR d.locked_until < now())
      ORDER BY d.next_attempt_at
      LIMIT ${Math.max(opts.limit * 8, 200)}
    ), ranked AS (
      SELECT c.id, c.next_attempt_at,
             row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.next_attempt_at, c.id) AS rn
      FROM candidates c JOIN webhook_endpoints e ON e.id = c.endpoint_id
      WHERE e.active AND NOT (c.endpoint_id = ANY (string_to_array(${busy}, ',')))
    ), due AS (
      SELECT d.id FROM webhook_deliveries d
      WHERE d.id IN (SELECT id FROM ranked WHERE rn <= ${opts.perEndpoint} ORDER BY next_attempt_at LIMIT ${opts.limit})
        AND d.status IN ('pending', 'failed') AND (d.locked_until IS NULL OR d.locked_until < now())
      FOR UPDATE SKIP LOCKED
    )
    UPDATE webhook_deliveries d
    SET locked_until = now() + make_interval(secs => ${opts.leaseMs}::double precision / 1000),
        claim_token = ${token}
    FROM due, webhook_endpoints e
    WHERE d.id = due.id AND e.id = d.endpoint_id
    RETURNING d.id, d.organization_id, d.endpoint_id, d.event, d.body, d.attempt_count, e.url, e.secret_enc,
              e.previous_secret_enc,
              (e.previous_secret_expires_at IS NOT NULL AND e.previous_secret_expires_at > now()) AS previous_valid`);
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
  status: 'succeeded' | 'failed' | 'dead' | null;
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
