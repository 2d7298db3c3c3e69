import { sql } from 'drizzle-orm';
import type { Database, Db, Tx } from '../db/client.js';
import { EVENT_CATALOG } from '../platform/events/catalog.js';
import { WAKE_CHANNEL } from '../platform/events/outbox.js';

/** Wakes sleeping workers when `tx` commits (NOTIFY is transactional: a rollback sends nothing). */
export async function notifyWorkers(tx: Tx | Db): Promise<void> {
  await tx.execute(sql`SELECT pg_notify(${WAKE_CHANNEL}, '')`);
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
 * setting dispatched_at are one statement, so one transaction: a crash anywhere leaves
 * the events undispatched and another pass (or another worker) picks them up; two
 * workers never fan out the same event.
 *
 * The statement builds each body itself (the layout of `deliveryBody`, with the event's
 * data as the JSON text it was emitted with, drizzle/0030): no event passes through this
 * process. Read, built and written back by the worker, they cost it about as much CPU per
 * delivery as the send (webhook bench).
 *
 * Delivery ids are made in the statement too, in `newId`'s layout: the prefix, the time in
 * base 36 (this process's clock, as every other id), then 14 random characters, here hex
 * digits of a random UUID's bits (56 bits: ids need to be unique, not secret).
 *
 * Platform query across tenants (Database.platformQuery): the worker serves every organization.
 */
export async function dispatchEvents(database: Pick<Database, 'platformQuery'>, limit = 200): Promise<number> {
  const [row] = await database.platformQuery(FAN_OUT, [limit, CATALOG, Date.now().toString(36).padStart(9, '0')]);
  return Number(row?.[0] ?? 0);
}

/**
 * An endpoint receives the events it names, and `*` is the catalog only, never `workflow.*`:
 * the catalog goes to the statement as one comma-separated text.
 */
const CATALOG = EVENT_CATALOG.join(',');

const FAN_OUT = {
  name: 'webhook_fan_out',
  text: `
    WITH ev AS MATERIALIZED (
      SELECT e.id, e.organization_id, e.type, e.data, e.created_at
      FROM events e
      WHERE e.dispatched_at IS NULL
      ORDER BY e.created_at
      LIMIT $1
      FOR UPDATE SKIP LOCKED
    ), made AS (
      SELECT 'dlv_' || $3::text || substr(encode(uuid_send(gen_random_uuid()), 'hex'), 18, 14) AS id,
             ev.id AS event_id, ev.organization_id, ep.id AS endpoint_id, ev.type, ev.data, ev.created_at
      FROM ev
      JOIN webhook_endpoints ep ON ep.organization_id = ev.organization_id AND ep.active
        AND (ep.events ? ev.type OR (ep.events ? '*' AND ev.type = ANY(string_to_array($2::text, ','))))
    ), ins AS (
      INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event, body)
      SELECT m.id, m.organization_id, m.endpoint_id, m.event_id, m.type,
             '{"id":' || to_json(m.id)::text || ',"event":' || to_json(m.type)::text
             || ',"timestamp":"' || to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
             || '","organizationId":' || to_json(m.organization_id)::text || ',"data":' || m.data::text || '}'
      FROM made m
    ), upd AS (
      UPDATE events SET dispatched_at = now() WHERE id IN (SELECT ev.id FROM ev)
    )
    SELECT count(*)::int FROM ev`,
};
