import { sql } from 'drizzle-orm';
import { rowsOf, type Tx } from '../../db/client.js';
import { eventBatches, events, workflowEventBatches } from '../../db/schema/index.js';
import { chunked, microsecondsAfter, valuesList } from '../../db/values.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { Ctx } from '../tenancy.js';
import { isKnownEvent } from './catalog.js';

/** The channel the webhook worker LISTENs on (PostgreSQL); emit() notifies it in the writing transaction. */
export const WAKE_CHANNEL = 'crm_webhooks';

export interface EmittedEvent {
  id: string;
  type: string;
  createdAt: Date;
}

/** The writing transaction, as `events.tx` and the batch rows name it. */
const WRITING_TRANSACTION = sql`pg_current_xact_id()::text::bigint`;

/**
 * The CTEs that add the writing transaction's batch row for each reader of the outbox (the
 * webhook fan-out, the workflow engine), once per transaction (ON CONFLICT DO NOTHING: an
 * earlier emit of the transaction may have made them). VALUES, not INSERT … SELECT: Citus
 * routes it to the organization's shard as it does the event.
 */
const batchRows = (organizationId: string) => sql`
    fan_out AS (
      INSERT INTO ${eventBatches} (tx, organization_id) VALUES (${WRITING_TRANSACTION}, ${organizationId})
      ON CONFLICT DO NOTHING
    ), workflows AS (
      INSERT INTO ${workflowEventBatches} (tx, organization_id) VALUES (${WRITING_TRANSACTION}, ${organizationId})
      ON CONFLICT DO NOTHING
    )`;

/**
 * Records an event in the caller's transaction (the outbox). If the transaction
 * rolls back, the event never existed; if it commits, the webhook engine is
 * guaranteed to see it, even when the process dies right after the commit.
 */
export async function emit(ctx: Ctx, type: string, data: Record<string, unknown>): Promise<EmittedEvent> {
  if (!isKnownEvent(type)) {
    // A programming error, never user input: refuse loudly rather than record junk.
    throw new AppError('INTERNAL', `Unknown event type ${type}`);
  }
  const row = {
    id: newId('evt'),
    organizationId: ctx.organizationId,
    type,
    data,
    depth: ctx.eventDepth ?? 0,
    createdAt: new Date(),
  };
  // One statement, one round trip: the outbox row, its transaction's batch rows for the fan-out
  // and the workflow engine (drizzle/0031, 0034), and the wake-up of LISTENing workers (NOTIFY
  // is delivered with the commit, never on rollback). The batch rows were a trigger's work until
  // drizzle/0042: on Citus a trigger runs on the node holding the shard, where writing another
  // table is refused and a NOTIFY is not heard by listeners of the coordinator. Values are
  // encoded as the query builder would (json as JSON text, the time as ISO 8601).
  await ctx.tx.execute(sql`
    WITH written AS (
      INSERT INTO ${events} (id, organization_id, type, data, depth, created_at, tx)
      VALUES (${row.id}, ${row.organizationId}, ${row.type}, ${JSON.stringify(row.data)}::json, ${row.depth},
              ${row.createdAt.toISOString()}::timestamptz, ${WRITING_TRANSACTION})
    ), ${batchRows(row.organizationId)}
    SELECT pg_notify(${WAKE_CHANNEL}, '')`);
  return { id: row.id, type, createdAt: row.createdAt };
}

/**
 * `emit` for many events of one type in one statement (a schedule's visits are made
 * by the hundred): the same rows, ids and wake-up as `emit` called once per item.
 */
export async function emitMany(ctx: Ctx, type: string, items: Record<string, unknown>[]): Promise<number> {
  if (items.length === 0) return 0;
  if (!isKnownEvent(type)) throw new AppError('INTERNAL', `Unknown event type ${type}`);
  const now = new Date();
  const depth = ctx.eventDepth ?? 0;
  // Multi-row VALUES (src/db/values.ts), as few statements as the parameter limit allows: Citus
  // routes them to the organization's shard. Not rowsSource's arrays off Citus: each event's JSON
  // escaped once more as an array element cost Node more than PostgreSQL saved (schedules bench:
  // 0.23-0.24 against 0.29). The n-th event is created n - 1 microseconds after the first.
  const rows = items.map((data, n) => [
    newId('evt'),
    ctx.organizationId,
    type,
    JSON.stringify(data),
    depth,
    microsecondsAfter(now, n),
  ]);
  for (const chunk of chunked(rows, 6, 3)) {
    await ctx.tx.execute(sql`
      WITH written AS (
        INSERT INTO ${events} (id, organization_id, type, data, depth, created_at) ${valuesList(chunk)}
      ), ${batchRows(ctx.organizationId)}
      SELECT pg_notify(${WAKE_CHANNEL}, '')`);
  }
  return items.length;
}

/** An outbox event as the workflow engine reads it. */
export interface EventToMatch {
  id: string;
  organizationId: string;
  type: string;
  data: Record<string, unknown>;
  depth: number;
}

/** Batches taken at once by one pass of the workflow engine, and events read from each. */
const WORKFLOW_BATCHES = 100;
const WORKFLOW_EVENTS_PER_BATCH = 100;

/**
 * The workflow engine's read of the outbox (its own queue, `workflow_event_batches`, drizzle/0034),
 * inside its cross-tenant pass `tx`: locks the oldest batches no other worker holds (FOR UPDATE
 * SKIP LOCKED: two workers never read one batch, and neither waits) and returns their events past
 * where the engine stopped, each batch in id order, at most WORKFLOW_EVENTS_PER_BATCH of each.
 * Events the engine had matched before 0034 (`workflows_checked_at` set) are left out. Then
 * `doneMatching` in the same transaction: a crash in between leaves the batches as they were.
 * The events are only read.
 */
export async function eventsToMatch(tx: Tx): Promise<{ events: EventToMatch[]; batches: WorkflowBatchRead[] }> {
  const locked = rowsOf<{ tx: string | number; organization_id: string; checked_to: string | null }>(
    await tx.execute(sql`
      SELECT x.tx, x.organization_id, x.checked_to FROM workflow_event_batches x
      ORDER BY x.tx, x.organization_id
      LIMIT ${WORKFLOW_BATCHES}
      FOR UPDATE SKIP LOCKED`),
  );
  if (locked.length === 0) return { events: [], batches: [] };
  const rows = rowsOf<{
    id: string;
    organization_id: string;
    type: string;
    data: unknown;
    depth: number;
    tx: string | number;
    checked: boolean;
    batch_last: string;
    batch_read: number;
  }>(
    // The last event read of each batch and how many, compared in the database (its collation
    // orders the ids, as in `e.id > b.checked_to`).
    await tx.execute(sql`
      SELECT e.id, e.organization_id, e.type, e.data, e.depth, e.tx, e.workflows_checked_at IS NOT NULL AS checked,
             max(e.id) OVER w AS batch_last, count(*) OVER w AS batch_read
      FROM unnest(${sql.param(locked.map((b) => String(b.tx)))}::bigint[], ${sql.param(locked.map((b) => b.organization_id))}::text[],
                  ${sql.param(locked.map((b) => b.checked_to ?? ''))}::text[]) AS b(tx, organization_id, checked_to)
      CROSS JOIN LATERAL (
        SELECT e.* FROM events e
        WHERE e.tx = b.tx AND e.organization_id = b.organization_id AND e.id > b.checked_to
        ORDER BY e.id
        LIMIT ${WORKFLOW_EVENTS_PER_BATCH}
      ) e
      WINDOW w AS (PARTITION BY b.tx, b.organization_id)`),
  );
  const key = (t: string | number, org: string) => `${t} ${org}`;
  const read = new Map(
    locked.map((b) => [
      key(b.tx, b.organization_id),
      { tx: String(b.tx), organizationId: b.organization_id, last: null as string | null, count: 0 },
    ]),
  );
  const toMatch: EventToMatch[] = [];
  for (const r of rows) {
    const batch = read.get(key(r.tx, r.organization_id));
    if (batch) {
      batch.last = r.batch_last;
      batch.count = Number(r.batch_read);
    }
    if (r.checked) continue;
    toMatch.push({
      id: r.id,
      organizationId: r.organization_id,
      type: r.type,
      data: (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as Record<string, unknown>,
      depth: Number(r.depth),
    });
  }
  return { events: toMatch, batches: [...read.values()] };
}

/** A batch as `eventsToMatch` read it: the last event read of it, and how many. */
export interface WorkflowBatchRead {
  tx: string;
  organizationId: string;
  last: string | null;
  count: number;
}

/**
 * The engine has matched what `eventsToMatch` returned (same transaction): a batch read to its
 * end is deleted; one that was cut at WORKFLOW_EVENTS_PER_BATCH and has events past it keeps
 * where it stopped (`checked_to`).
 */
export async function doneMatching(tx: Tx, batches: WorkflowBatchRead[]): Promise<void> {
  if (batches.length === 0) return;
  // `cut_at`: the last event read of a batch read up to the limit (it may go on), else null.
  const cutAt = batches.map((b) => (b.count >= WORKFLOW_EVENTS_PER_BATCH ? b.last : null));
  await tx.execute(sql`
    WITH reached AS (
      SELECT r.tx, r.organization_id, r.cut_at,
             r.cut_at IS NOT NULL AND EXISTS (SELECT 1 FROM events e
               WHERE e.tx = r.tx AND e.organization_id = r.organization_id AND e.id > r.cut_at) AS more
      FROM unnest(${sql.param(batches.map((b) => b.tx))}::bigint[], ${sql.param(batches.map((b) => b.organizationId))}::text[],
                  ${sql.param(cutAt)}::text[]) AS r(tx, organization_id, cut_at)
    ), progress AS (
      UPDATE workflow_event_batches x SET checked_to = reached.cut_at
      FROM reached WHERE x.tx = reached.tx AND x.organization_id = reached.organization_id AND reached.more
    )
    DELETE FROM workflow_event_batches x USING reached
    WHERE x.tx = reached.tx AND x.organization_id = reached.organization_id AND NOT reached.more`);
}

/** An organization's event as a reader with its own place in the outbox reads it. */
export interface OutboxEvent {
  id: string;
  tx: number;
  type: string;
  data: Record<string, unknown>;
}

/**
 * An organization's events after `after` (its (tx, id), the place a reader such as the
 * QuickBooks feed keeps), in (tx, id) order, `limit` at most. Only events of transactions older
 * than every transaction still running (the snapshot's xmin) are read: one that commits later
 * always has a greater tx, so a reader moving its place to the last event read never skips one.
 */
export async function eventsAfter(
  tx: Tx,
  organizationId: string,
  after: { tx: number; id: string },
  limit: number,
): Promise<OutboxEvent[]> {
  const rows = rowsOf<{ id: string; tx: string | number; type: string; data: unknown }>(
    await tx.execute(sql`
      SELECT e.id, e.tx, e.type, e.data FROM events e
      WHERE e.organization_id = ${organizationId}
        AND (e.tx, e.id) > (${after.tx}::bigint, ${after.id}::text)
        AND e.tx < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
      ORDER BY e.tx, e.id
      LIMIT ${limit}`),
  );
  return rows.map((r) => ({
    id: r.id,
    tx: Number(r.tx),
    type: r.type,
    data: (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as Record<string, unknown>,
  }));
}
