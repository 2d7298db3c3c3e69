import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Database, Db, Tx } from '../db/client.js';
import { events, webhookDeliveries, webhookEndpoints } from '../db/schema/index.js';
import { newId } from '../platform/ids.js';
import { isCatalogEvent } from './catalog.js';

/** The channel the worker LISTENs on (PostgreSQL); emit() notifies it in the writing transaction. */
export const WAKE_CHANNEL = 'crm_webhooks';

/** Wakes sleeping workers when `tx` commits (NOTIFY is transactional: a rollback sends nothing). */
export async function notifyWorkers(tx: Tx | Db): Promise<void> {
  await tx.execute(sql`SELECT pg_notify(${WAKE_CHANNEL}, '')`);
}

/** Does an endpoint subscribed to `subscribed` receive `event`? `*` is the catalog only, never workflow.* */
export function subscribes(subscribed: readonly string[], event: string): boolean {
  return subscribed.includes(event) || (subscribed.includes('*') && isCatalogEvent(event));
}

/** The delivery body (spec 6.3 + decisions §5): `timestamp` is the event's time, ISO with ms, UTC. */
export function deliveryBody(
  deliveryId: string,
  event: string,
  createdAt: Date,
  organizationId: string,
  data: unknown,
): string {
  return JSON.stringify({ id: deliveryId, event, timestamp: createdAt.toISOString(), organizationId, data });
}

/**
 * Fan-out: turns undispatched outbox events into one delivery per subscribed active
 * endpoint. Claiming the events (FOR UPDATE SKIP LOCKED), inserting the deliveries and
 * setting dispatched_at happen in one transaction, so a crash anywhere leaves the
 * events undispatched and another pass (or another worker) picks them up; two
 * workers never fan out the same event.
 *
 * Platform query across tenants: runs as the connecting database user, not the
 * RLS-restricted application role, because the worker serves every organization.
 */
export async function dispatchEvents(database: Database, limit = 200): Promise<number> {
  return database.db.transaction(async (tx) => {
    const batch = await tx
      .select()
      .from(events)
      .where(isNull(events.dispatchedAt))
      .orderBy(asc(events.createdAt))
      .limit(limit)
      .for('update', { skipLocked: true });
    if (batch.length === 0) return 0;
    const orgIds = [...new Set(batch.map((e) => e.organizationId))];
    const endpoints = await tx
      .select({
        id: webhookEndpoints.id,
        organizationId: webhookEndpoints.organizationId,
        events: webhookEndpoints.events,
      })
      .from(webhookEndpoints)
      .where(and(inArray(webhookEndpoints.organizationId, orgIds), eq(webhookEndpoints.active, true)));
    const rows: Array<typeof webhookDeliveries.$inferInsert> = [];
    for (const e of batch) {
      for (const ep of endpoints) {
        if (ep.organizationId !== e.organizationId || !subscribes(ep.events, e.type)) continue;
        const id = newId('dlv');
        rows.push({
          id,
          organizationId: e.organizationId,
          endpointId: ep.id,
          eventId: e.id,
          event: e.type,
          body: deliveryBody(id, e.type, e.createdAt, e.organizationId, e.data),
        });
      }
    }
    for (let i = 0; i < rows.length; i += 500) await tx.insert(webhookDeliveries).values(rows.slice(i, i + 500));
    await tx
      .update(events)
      .set({ dispatchedAt: new Date() })
      .where(
        inArray(
          events.id,
          batch.map((e) => e.id),
        ),
      );
    return batch.length;
  });
}
