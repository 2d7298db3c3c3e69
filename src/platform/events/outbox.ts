import { inArray, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { events } from '../../db/schema/index.js';
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
  // One statement, one round trip: the outbox row and the wake-up of LISTENing workers
  // (NOTIFY is delivered with the commit, never on rollback). The database adds the row's
  // transaction batch for the fan-out (drizzle/0031, 0033). Values are encoded as the query
  // builder would (json as JSON text, the time as ISO 8601).
  await ctx.tx.execute(sql`
    WITH written AS (
      INSERT INTO ${events} (id, organization_id, type, data, depth, created_at)
      VALUES (${row.id}, ${row.organizationId}, ${row.type}, ${JSON.stringify(row.data)}::json, ${row.depth},
              ${row.createdAt.toISOString()}::timestamptz)
    )
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
  const now = new Date().toISOString();
  const ids = items.map(() => newId('evt'));
  await ctx.tx.execute(sql`
    WITH written AS (
      INSERT INTO ${events} (id, organization_id, type, data, depth, created_at)
      SELECT i.id, ${ctx.organizationId}, ${type}, e.data, ${ctx.eventDepth ?? 0},
             ${now}::timestamptz + (e.n - 1) * interval '1 microsecond'
      FROM json_array_elements(${JSON.stringify(items)}::json) WITH ORDINALITY AS e(data, n)
      JOIN unnest(${sql.param(ids)}::text[]) WITH ORDINALITY AS i(id, n) USING (n)
    )
    SELECT pg_notify(${WAKE_CHANNEL}, '')`);
  return items.length;
}

/**
 * The workflow engine has matched these events against the workflows (its cursor over the
 * outbox, `workflows_checked_at`). The outbox owns the events table, so the engine marks
 * through here; `tx` is its cross-tenant pass.
 */
export async function markCheckedByWorkflows(tx: Tx, eventIds: string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await tx.update(events).set({ workflowsCheckedAt: new Date() }).where(inArray(events.id, eventIds));
}
