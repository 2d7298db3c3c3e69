import { sql } from 'drizzle-orm';
import { type Database, type Db, rowsOf } from '../db/client.js';
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
  /**
   * Its next_attempt_at when claimed, as the database wrote it (to the microsecond): the
   * result applies only while the delivery is still pending or failed and due then.
   */
  due: string;
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
  /**
   * The caller's own claims whose receiver has accepted them (2xx) but whose result is
   * not written yet: no longer at the receiver, so they do not count against the cap. A
   * refused one is not listed: it holds its room until its pause or back-off is written.
   */
  answered?: readonly string[];
  /**
   * All the caller's claims whose result it has not written yet (under way or answered):
   * in flight while their lease holds, so the claim need not look them up (0028).
   */
  held?: readonly string[];
  /**
   * Claim one organization at a time (`claimPerOrganization`), as Citus needs; the worker sets
   * it when the database is Citus. Otherwise one call claims across every organization.
   */
  perOrganization?: boolean;
}

/*
 * The worker's queries are platform queries across tenants: they run as the platform
 * role, not as the RLS-restricted application role, because one worker serves every
 * organization. Tenant-facing code never calls them.
 */

/**
 * Claims due deliveries fairly, under a lease kept on the endpoint row: two workers never
 * claim the same delivery, and a delivery whose worker died is claimed again once its
 * lease has expired. All times come from the database clock.
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
 * Caps across workers. The claim is the database function `webhook_claim`
 * (drizzle/0021_webhook_claim_functions.sql, as revised by 0023, 0025, 0026, 0027 and 0028), two statements in
 * one call. The first locks the chosen endpoint rows (FOR NO KEY UPDATE SKIP LOCKED:
 * another worker claiming the same endpoint skips it, nothing waits). The second takes a
 * fresh snapshot after the locks are held, so it sees every claim that committed before,
 * and counts each endpoint's deliveries in flight (all workers) and its rate tokens
 * exactly: two workers can never both fill the same room. The endpoint row lists its
 * claims (`inflight_ids`, each with the due time it was claimed at and its lease); the
 * count probes those by key, so it costs the same however many deliveries finished
 * lately; those the caller's call has just recorded, and those the caller still holds, are
 * not probed at all (0028). The list, pruned of finished claims, with this claim's added, and the rate
 * tokens spent are written back on the locked row; results never touch it, and the
 * claimed deliveries are not written at all (0026): a listed one is skipped by other
 * claims while its lease holds, and its result applies only while it is still as
 * claimed (`due`).
 *
 * One call is one round trip and one implicit transaction (Database.platformQuery), and
 * the function's plans are kept per connection: under load a claim costs about what
 * its index probes cost.
 */
export async function claimDeliveries(
  database: Pick<Database, 'platformQuery'>,
  opts: ClaimOptions,
): Promise<ClaimedDelivery[]> {
  if (opts.limit <= 0) return [];
  if (opts.perOrganization) return claimPerOrganization(database, opts, []);
  const rows = await database.platformQuery(CLAIM, [
    opts.limit,
    opts.perEndpoint,
    Math.round(opts.leaseMs),
    idList(opts.answered),
    idList(opts.held),
  ]);
  return rows.map((r) => claimedOf(r, 0));
}

/**
 * The claim on Citus (docs/scaling.md, "Work across organizations, once distributed"): Citus
 * locks rows only within one shard, so `webhook_claim`, which locks due endpoints of every
 * organization in one statement, is refused there. One read across shards, without locks, finds
 * the organizations with due deliveries (at most four times the limit, in random order); then
 * `webhook_claim_org` (drizzle/0051: `webhook_claim` with every table named by the organization,
 * routed whole to its shard) claims for each in turn, each organization an even share of what is
 * left of the limit. Organizations still take turns (none gets more of a claim than another
 * while both have work), and within one the endpoints do, as in `webhook_claim`. One round trip
 * per organization claimed: on one PostgreSQL that buys nothing, so `webhook_claim` stays the
 * path there. `done`: the ids the caller's call has just recorded (as `p_done`).
 */
async function claimPerOrganization(
  database: Pick<Database, 'platformQuery'>,
  opts: ClaimOptions,
  done: readonly string[],
): Promise<ClaimedDelivery[]> {
  const orgs = await database.platformQuery(DUE_ORGANIZATIONS, [opts.limit * 4]);
  const claimed: ClaimedDelivery[] = [];
  const common = [opts.perEndpoint, Math.round(opts.leaseMs), idList(opts.answered), idList(opts.held), idList(done)];
  for (let i = 0; i < orgs.length && claimed.length < opts.limit; i++) {
    const share = Math.ceil((opts.limit - claimed.length) / (orgs.length - i));
    const rows = await database.platformQuery(CLAIM_OF, [orgs[i]?.[0], share, ...common]);
    for (const r of rows) claimed.push(claimedOf(r, 0));
  }
  return claimed;
}

/**
 * The organizations with an active endpoint that has a due delivery, in random order: a read
 * across shards on Citus (no lock; the claims that follow lock). A delivery in flight still
 * counts here; its organization's claim then comes back short, and the next ones take the rest.
 */
const DUE_ORGANIZATIONS = {
  text: `
    SELECT c.organization_id FROM webhook_endpoints c
    WHERE c.active AND (c.paused_until IS NULL OR c.paused_until <= now())
      AND EXISTS (SELECT 1 FROM webhook_deliveries d
                  WHERE d.organization_id = c.organization_id AND d.endpoint_id = c.id
                    AND d.status IN ('pending', 'failed') AND d.next_attempt_at <= now())
    GROUP BY c.organization_id
    ORDER BY random()
    LIMIT $1`,
};
const CLAIM_OF = {
  text: "SELECT * FROM webhook_claim_org($1, $2::int, $3::int, $4::int, string_to_array($5, ','), string_to_array($7, ','), string_to_array($6, ','))",
};
const RECORD_OF = { text: 'SELECT id FROM webhook_record_successes_org($1, $2::json) AS id' };

/** Successes grouped by their organization (the per-organization calls take one each). */
function byOrganization(items: ReadonlyArray<Success>): Map<string, Success[]> {
  const groups = new Map<string, Success[]>();
  for (const item of items) {
    const group = groups.get(item.claim.organizationId);
    if (group) group.push(item);
    else groups.set(item.claim.organizationId, [item]);
  }
  return groups;
}

/*
 * The two hot calls are sent without the query builder (see
 * Database.platformQuery), their rows arrays in the functions' column order:
 * id, organization_id, endpoint_id, event, body, attempt_count, due, url, secret_enc,
 * previous_secret_enc, previous_valid (after a leading `recorded` in webhook_record_and_claim: the
 * ids of the results that applied, comma-separated; ids never hold a comma).
 */
const CLAIM = {
  text: "SELECT * FROM webhook_claim($1::int, $2::int, $3::int, string_to_array($4, ','), '{}', string_to_array($5, ','))",
};
const RECORD_AND_CLAIM = {
  text: "SELECT * FROM webhook_record_and_claim($1::json, $2::int, $3::int, $4::int, string_to_array($5, ','), string_to_array($6, ','))",
};

/**
 * Ids as one comma-separated text (ids never hold a comma), split by string_to_array: the
 * driver escapes an array parameter element by element, a measurable share of the
 * worker's CPU for two lists of up to `concurrency` ids on every call.
 */
const idList = (ids: readonly string[] | undefined) => (ids ?? []).join(',');

function claimedOf(r: unknown[], at: number): ClaimedDelivery {
  return {
    id: r[at] as string,
    organizationId: r[at + 1] as string,
    endpointId: r[at + 2] as string,
    event: r[at + 3] as string,
    body: r[at + 4] as string,
    attemptCount: Number(r[at + 5]),
    due: r[at + 6] as string,
    url: r[at + 7] as string,
    secretEnc: r[at + 8] as string,
    previousSecretEnc: (r[at + 9] as string | null) ?? null,
    previousValid: r[at + 10] === true,
  };
}

export interface RecordOutcome {
  /** False when the claim was lost (lease expired and taken, endpoint deleted): only the log was written. */
  applied: boolean;
  /** `deferred`: a 429/503 with Retry-After put the delivery back without using up an attempt. */
  status: 'succeeded' | 'failed' | 'dead' | 'deferred' | null;
  endpointDeactivated: boolean;
}

/**
 * The delivery is still as `claim` found it: no result has been written for it since.
 * (Not `status IN ('pending', 'failed')`: that matches the due index's predicate, and the
 * planner may read that index instead of probing the key; drizzle/0026.)
 */
function stillClaimed(claim: ClaimedDelivery) {
  return sql`status NOT IN ('succeeded', 'dead') AND next_attempt_at = ${claim.due}::timestamptz`;
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
      SELECT id FROM webhook_deliveries
      WHERE organization_id = ${claim.organizationId} AND id = ${claim.id} AND ${stillClaimed(claim)}
    ), log AS (
      INSERT INTO webhook_attempts (id, organization_id, delivery_id, attempted_at, status_code, duration_ms, error, response_body)
      SELECT ${newId('wha')}, ${claim.organizationId}, ${claim.id}, ${result.attemptedAt.toISOString()}::timestamptz,
             ${result.statusCode}::int, ${result.durationMs}::int, ${result.error}::text, ${result.responseBody}::text
      WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE organization_id = ${claim.organizationId} AND id = ${claim.id})
    ), ep AS (
      UPDATE webhook_endpoints
      SET consecutive_failures = CASE WHEN ${ok}::boolean THEN 0 ELSE consecutive_failures + 1 END,
          active = CASE WHEN NOT ${ok}::boolean AND consecutive_failures + 1 >= ${MAX_CONSECUTIVE_FAILURES}
                        THEN false ELSE active END,
          deactivated_at = CASE WHEN NOT ${ok}::boolean AND active
                                 AND consecutive_failures + 1 >= ${MAX_CONSECUTIVE_FAILURES}
                                THEN clock.at ELSE deactivated_at END,
          updated_at = now()
      -- The time as a column, not now() inside the CASE: Citus refuses a function that is not
      -- immutable inside an UPDATE's CASE or COALESCE (it evaluates them before routing).
      FROM (SELECT now() AS at) clock
      WHERE organization_id = ${claim.organizationId} AND id = ${claim.endpointId} AND EXISTS (SELECT 1 FROM mine)
        -- A success on a healthy endpoint leaves its row alone: it is every delivery's
        -- hot row, and rewriting it per delivery serialises the whole engine on one lock.
        -- A failure counts only when it kills the delivery (retries used up), and only
        -- while the endpoint is active: an attempt that was in flight when the endpoint
        -- was deactivated does not push the count past 10.
        AND CASE WHEN ${ok}::boolean THEN consecutive_failures <> 0 ELSE ${exhausted}::boolean AND active END
      RETURNING id, active
    ), was AS (
      SELECT active FROM webhook_endpoints WHERE organization_id = ${claim.organizationId} AND id = ${claim.endpointId}
    ), self AS (
      UPDATE webhook_deliveries
      SET status = CASE WHEN ${ok}::boolean THEN 'succeeded'
                        WHEN ${exhausted}::boolean OR EXISTS (SELECT 1 FROM ep WHERE NOT ep.active)
                             OR EXISTS (SELECT 1 FROM was WHERE NOT was.active) THEN 'dead'
                        ELSE 'failed' END,
          attempt_count = attempt_count + 1,
          next_attempt_at = ${ok || exhausted ? sql`next_attempt_at` : sql`now() + make_interval(secs => ${delayMs}::double precision / 1000)`},
          last_status_code = ${result.statusCode}::int,
          last_error = ${result.error}::text,
          last_attempt_at = ${result.attemptedAt.toISOString()}::timestamptz,
          succeeded_at = ${ok ? sql`now()` : sql`NULL`},
          updated_at = now()
      -- The claim is checked again on the row as it is when locked: a deactivation that
      -- committed meanwhile has turned it dead, and that stands.
      WHERE organization_id = ${claim.organizationId} AND id IN (SELECT id FROM mine) AND ${stillClaimed(claim)}
      RETURNING status
    ), dead AS (
      UPDATE webhook_deliveries
      SET status = 'dead', updated_at = now(),
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
 * The common case in bulk: successful attempts, written by one call of the database
 * function `webhook_record_successes` (delivery rows → succeeded, each with its attempt
 * kept on the row (0029); an attempt row only for a result whose claim was lost; failure
 * counters of the touched endpoints reset where they are not already zero).
 * Returns the ids whose claim was still held.
 */
export async function recordSuccesses(
  db: Db,
  items: ReadonlyArray<Success>,
  perOrganization = false,
): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  if (perOrganization) {
    // On Citus, one call per organization (webhook_record_successes_org, drizzle/0051).
    const applied = new Set<string>();
    for (const [org, group] of byOrganization(items)) {
      const res = await db.execute(
        sql`SELECT id FROM webhook_record_successes_org(${org}, ${successesJson(group)}::json) AS id`,
      );
      for (const r of rowsOf<{ id: string }>(res)) applied.add(r.id);
    }
    return applied;
  }
  const res = await db.execute(sql`SELECT id FROM webhook_record_successes(${successesJson(items)}::json) AS id`);
  return new Set(rowsOf<{ id: string }>(res).map((r) => r.id));
}

type Success = { claim: ClaimedDelivery; result: AttemptResult };

/**
 * The results as one JSON array (the functions' `p_results`, read by json_to_recordset):
 * one parameter whatever the batch size, and JSON.stringify escapes it in one native pass
 * where pg would escape eight arrays element by element. The organization goes with each
 * result: the delivery's key is (organization, id) (drizzle/0035). The attempt's time goes as ms since
 * the epoch (drizzle/0029), a number rather than a Date made into ISO text.
 */
function successesJson(items: ReadonlyArray<Success>): string {
  return JSON.stringify(
    items.map(({ claim, result }) => ({
      id: claim.id,
      organization_id: claim.organizationId,
      due: claim.due,
      attempt_id: newId('wha'),
      attempted_ms: result.attemptedAt.getTime(),
      status_code: result.statusCode,
      duration_ms: result.durationMs,
      response_body: result.responseBody,
    })),
  );
}

/**
 * `recordSuccesses` and `claimDeliveries` in one call (`webhook_record_and_claim`): the
 * worker's writer records a batch and claims for the slots it freed in one round trip.
 * The claim runs after the results are written, so their deliveries no longer count
 * against their endpoint's cap.
 */
export async function recordSuccessesAndClaim(
  database: Pick<Database, 'platformQuery'>,
  items: ReadonlyArray<Success>,
  opts: ClaimOptions,
): Promise<{ applied: Set<string>; claimed: ClaimedDelivery[] }> {
  if (opts.perOrganization) {
    // On Citus: each organization's successes, then the claim, one organization per call.
    const applied = new Set<string>();
    for (const [org, group] of byOrganization(items)) {
      for (const [id] of await database.platformQuery(RECORD_OF, [org, successesJson(group)]))
        applied.add(id as string);
    }
    const claimed = opts.limit > 0 ? await claimPerOrganization(database, opts, [...applied]) : [];
    return { applied, claimed };
  }
  const rows = await database.platformQuery(RECORD_AND_CLAIM, [
    successesJson(items),
    Math.max(0, opts.limit),
    opts.perEndpoint,
    Math.round(opts.leaseMs),
    idList(opts.answered),
    idList(opts.held),
  ]);
  let applied = new Set<string>();
  const claimed: ClaimedDelivery[] = [];
  for (const r of rows) {
    if (r[0] !== null) applied = new Set(r[0] === '' ? [] : (r[0] as string).split(','));
    else claimed.push(claimedOf(r, 1));
  }
  return { applied, claimed };
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
      WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE organization_id = ${claim.organizationId} AND id = ${claim.id})
    ), self AS (
      UPDATE webhook_deliveries
      SET next_attempt_at = ${until},
          last_status_code = ${result.statusCode}::int, last_error = ${error}::text,
          last_attempt_at = ${result.attemptedAt.toISOString()}::timestamptz, updated_at = now()
      WHERE organization_id = ${claim.organizationId} AND id = ${claim.id} AND ${stillClaimed(claim)}
      RETURNING endpoint_id
    ), pause AS (
      UPDATE webhook_endpoints
      SET paused_until = GREATEST(paused_until, ${until})
      WHERE organization_id = ${claim.organizationId} AND id IN (SELECT endpoint_id FROM self)
    )
    SELECT count(*)::int AS n FROM self`);
  const [row] = rowsOf<{ n: number }>(res);
  const applied = Number(row?.n ?? 0) > 0;
  return { applied, status: applied ? 'deferred' : null, endpointDeactivated: false };
}
