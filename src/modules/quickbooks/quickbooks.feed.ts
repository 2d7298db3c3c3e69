import { eq, sql } from 'drizzle-orm';
import { type Database, rowsOf } from '../../db/client.js';
import { quickbooksConnections, quickbooksSyncJobs } from '../../db/schema/index.js';
import { asPlatform } from '../../platform/cross-tenant.js';
import { eventsAfter, type OutboxEvent } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';

/*
 * The feed (events → jobs), safe in several processes at once: for each connected organization
 * (its connection row locked, SKIP LOCKED), reads the event outbox past its place and makes one
 * job per change of a customer (created, updated, anonymized, deleted), an invoice out of draft,
 * a payment or a refund (unique per record and event: a feed run twice makes nothing twice),
 * then moves its place, all in one transaction. Changes commit with their events, so every
 * committed change is synced and a rolled-back one never is. A new connection reads from the
 * start: what the organization already has syncs too.
 */

/** Events read per organization and pass. */
const FEED_BATCH = 500;

export type Entity = 'customer' | 'invoice' | 'payment' | 'refund';
interface JobSeed {
  entity: Entity;
  entityId: string;
  payload: Record<string, unknown>;
}

/** The job an event makes, if any. */
function seedOf(e: OutboxEvent): JobSeed | null {
  const d = e.data;
  if (e.type === 'customer.created' || e.type === 'customer.updated') {
    const customer = d.customer as { id?: string } | undefined;
    return customer?.id ? { entity: 'customer', entityId: customer.id, payload: { customer } } : null;
  }
  if (e.type === 'customer.deleted') {
    const id = d.customerId as string | undefined;
    return id ? { entity: 'customer', entityId: id, payload: { deleted: true } } : null;
  }
  if (e.type.startsWith('invoice.')) {
    const invoice = d.invoice as { id?: string; status?: string } | undefined;
    if (!invoice?.id || invoice.status === 'draft') return null;
    return { entity: 'invoice', entityId: invoice.id, payload: { invoice } };
  }
  if (e.type === 'payment.received') {
    const payment = d.payment as { id?: string } | undefined;
    const invoice = d.invoice as { id?: string; customerId?: string } | undefined;
    if (!payment?.id || !invoice?.id) return null;
    return {
      entity: 'payment',
      entityId: payment.id,
      payload: { payment, invoiceId: invoice.id, customerId: invoice.customerId },
    };
  }
  if (e.type === 'payment.refunded') {
    const refund = d.refund as { id?: string } | undefined;
    const payment = d.payment as { id?: string } | undefined;
    if (!refund?.id || !payment?.id) return null;
    return { entity: 'refund', entityId: refund.id, payload: { refund, payment } };
  }
  return null;
}

/** One feed pass over the connected organizations; answers how many events it read. */
export async function feedJobs(database: Database): Promise<number> {
  return asPlatform(database.db, async (tx) => {
    const connections = rowsOf<{ organization_id: string; feed_tx: string | number; feed_event_id: string }>(
      await tx.execute(sql`
        SELECT organization_id, feed_tx, feed_event_id FROM quickbooks_connections
        WHERE status = 'connected'
        ORDER BY updated_at
        LIMIT 20
        FOR UPDATE SKIP LOCKED`),
    );
    let read = 0;
    for (const c of connections) {
      const batch = await eventsAfter(
        tx,
        c.organization_id,
        { tx: Number(c.feed_tx), id: c.feed_event_id },
        FEED_BATCH,
      );
      if (batch.length === 0) continue;
      read += batch.length;
      const jobs = batch.flatMap((e) => {
        const seed = seedOf(e);
        return seed
          ? [{ id: newId('qbj'), organizationId: c.organization_id, ...seed, version: e.id, eventType: e.type }]
          : [];
      });
      if (jobs.length > 0) await tx.insert(quickbooksSyncJobs).values(jobs).onConflictDoNothing();
      const last = batch.at(-1) as OutboxEvent;
      await tx
        .update(quickbooksConnections)
        .set({ feedTx: last.tx, feedEventId: last.id })
        .where(eq(quickbooksConnections.organizationId, c.organization_id));
    }
    return read;
  });
}
