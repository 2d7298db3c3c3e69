import { type SQL, sql } from 'drizzle-orm';
import { type Database, type Db, rowsOf, type Tx } from '../db/client.js';
import { chunked, valuesList } from '../db/values.js';
import { asPlatform } from '../platform/cross-tenant.js';
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
 * Fan-out: turns waiting outbox events into one delivery per subscribed active endpoint.
 * What waits is kept per writing transaction (`event_batches`, drizzle/0031): the statement
 * takes the oldest batches, reads up to `limit` of their events in id order, locks the
 * batches it read from (FOR UPDATE SKIP LOCKED: two workers never fan out the same batch,
 * and one never waits for the other), inserts the deliveries, and deletes each batch it
 * finished or notes how far it got in one it stopped inside (`fanned_to`). One statement,
 * so one transaction: a crash anywhere leaves the batches as they were and another pass
 * (or another worker) picks them up. The events themselves are only read.
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
 * `perOrganization` (the worker sets it on Citus): one statement per organization with work.
 */
export async function dispatchEvents(database: FanOutDatabase, limit = 200, perOrganization = false): Promise<number> {
  if (perOrganization) return dispatchPerOrganization(database, limit);
  const [row] = await database.platformQuery(FAN_OUT, [limit, CATALOG, idTime()]);
  return Number(row?.[0] ?? 0);
}

/** The time part of a delivery id (`newId`'s layout), made once per statement. */
const idTime = () => Date.now().toString(36).padStart(9, '0');

/**
 * The fan-out on Citus (docs/scaling.md, "Work across organizations, once distributed"): Citus
 * locks rows only within one shard and refuses FAN_OUT, which locks the batches of every
 * organization in one statement ("cannot push down this subquery"). So: one read across shards,
 * without locks, of the organizations with batches waiting, oldest first; then the same statement
 * for each of them in turn, every table named with its organization (`FAN_OUT_OF`: routed whole to
 * its shard). Each organization takes an even share of the pass, never less than MIN_SHARE, as
 * the batches do in FAN_OUT, so an organization committing after another's huge transaction is
 * fanned out in the next pass. One round trip per organization with work: on one PostgreSQL that
 * buys nothing, so FAN_OUT stays the path there.
 */
async function dispatchPerOrganization(database: FanOutDatabase, limit: number): Promise<number> {
  const orgs = await database.platformQuery(WAITING_ORGANIZATIONS, [Math.max(1, Math.floor(limit / MIN_SHARE))]);
  const share = Math.max(Math.ceil(limit / Math.max(1, orgs.length)), MIN_SHARE);
  let total = 0;
  for (const [org] of orgs) {
    if (total >= limit) break;
    total += await fanOutOrganization(database, org as string, Math.min(share, limit - total));
  }
  return total;
}

/**
 * One organization's pass, in one transaction of two statements: FAN_OUT_OF locks and reads its
 * batches, marks what it finished and answers the deliveries to make, bodies built; then they
 * are inserted as multi-row `VALUES` (src/db/values.ts). Citus routes a statement whole to one
 * shard only when its CTEs select, update or delete ("only SELECT, UPDATE, or DELETE common table
 * expressions may be router planned"): with the INSERT among them it planned each CTE apart and
 * failed. So on Citus the deliveries pass through the worker, which FAN_OUT spares it elsewhere.
 */
async function fanOutOrganization(database: FanOutDatabase, org: string, limit: number): Promise<number> {
  return asPlatform(database.db, async (tx) => {
    const made = rowsOf<{
      n: number;
      id: string | null;
      endpoint_id: string;
      event_id: string;
      event: string;
      body: string;
    }>(await tx.execute(withParams(FAN_OUT_OF.text, [limit, CATALOG, idTime(), org])));
    const rows = made.filter((m) => m.id !== null).map((m) => [m.id, org, m.endpoint_id, m.event_id, m.event, m.body]);
    for (const chunk of chunked(rows, 6)) {
      await tx.execute(
        sql`INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event, body) ${valuesList(chunk)}`,
      );
    }
    return Number(made[0]?.n ?? 0);
  });
}

/** A statement's text with its `$n` placeholders bound to `values` (`$1` is `values[0]`). */
function withParams(text: string, values: unknown[]): SQL {
  const parts = text.split(/\$(\d+)/);
  return sql.join(
    parts.map((part, i) => (i % 2 === 0 ? sql.raw(part) : sql`${values[Number(part) - 1]}`)),
    sql.raw(''),
  );
}

type FanOutDatabase = Pick<Database, 'platformQuery' | 'db'>;

/** The organizations with batches waiting, the oldest batch first (a read across shards, no lock). */
const WAITING_ORGANIZATIONS = {
  text: `SELECT x.organization_id FROM event_batches x GROUP BY x.organization_id ORDER BY min(x.tx), x.organization_id LIMIT $1`,
};

/**
 * An endpoint receives the events it names, and `*` is the catalog only, never `workflow.*`:
 * the catalog goes to the statement as one comma-separated text.
 */
const CATALOG = EVENT_CATALOG.join(',');

/**
 * A batch's share of a pass: the pass's `limit` split evenly over the batches waiting, but never
 * fewer events than this. Without shares one transaction of 100,000 events (an import, a month's
 * batch invoicing) filled pass after pass, and every other organization's events, committed
 * after it, waited for all of it to be fanned out: seconds to minutes of delay for tenants with
 * nothing to do with it. With shares the pass that follows reads them beside it. The floor keeps
 * a pass from cutting many batches into slivers (each cut batch costs a write of where it
 * stopped, `progress`); a pass still reads limit / MIN_SHARE batches or more (8 of the worker's
 * 200), so a transaction committed behind k bigger ones is read within about k / 8 passes.
 */
const MIN_SHARE = 25;

/**
 * `pre` reads without locks: the oldest batches, each one's events past where it stopped, in
 * id order, up to the batch's share (`share`), and stops at `limit` events (a nested loop: each
 * batch's rows come in order, so the cut leaves a prefix of the last batch read). `b` then locks
 * only the batches read, skipping those another worker holds, and sees each one as last
 * committed: `ev` keeps the events past its `fanned_to` as it is now (another worker may have
 * gone further meanwhile). A batch with nothing past its last event made is done (`done`); one
 * cut short records where (`progress`).
 *
 * The text is for every organization (`perOrg` false) or for the one in $4: then every table it
 * reads or writes is named with `organization_id = $4`, which Citus needs to route the whole
 * statement, locks and all, to that organization's shard (`dispatchPerOrganization`).
 */
function fanOutText(perOrg: boolean): string {
  const org = (alias: string) => (perOrg ? '$4::text' : `${alias}.organization_id`);
  const and = (alias: string) => (perOrg ? ` AND ${alias}.organization_id = $4::text` : '');
  const where = (alias: string) => (perOrg ? ` WHERE ${alias}.organization_id = $4::text` : '');
  return `
    WITH cand AS MATERIALIZED (
      SELECT x.tx, x.organization_id, x.fanned_to
      FROM event_batches x${where('x')}
      ORDER BY x.tx, x.organization_id
      LIMIT $1
    ), share AS (
      SELECT greatest(ceil($1::numeric / nullif(count(*), 0)), ${MIN_SHARE})::int AS n FROM cand
    ), pre AS MATERIALIZED (
      SELECT e.* FROM cand c
      CROSS JOIN LATERAL (
        SELECT e.id, e.tx, e.organization_id, e.type, e.data, e.created_at
        FROM events e
        WHERE e.tx = c.tx AND e.organization_id = ${org('c')} AND e.id > COALESCE(c.fanned_to, '')
        ORDER BY e.id
        LIMIT (SELECT share.n FROM share)
      ) e
      LIMIT $1
    ), b AS MATERIALIZED (
      SELECT x.tx, x.organization_id, x.fanned_to
      FROM event_batches x
      WHERE (x.tx, x.organization_id) IN (SELECT pre.tx, pre.organization_id FROM pre)${and('x')}
      FOR UPDATE SKIP LOCKED
    ), ev AS MATERIALIZED (
      SELECT pre.* FROM pre
      JOIN b ON b.tx = pre.tx AND b.organization_id = pre.organization_id
      WHERE pre.id > COALESCE(b.fanned_to, '')
    ), made AS (
      SELECT 'dlv_' || $3::text || substr(encode(uuid_send(gen_random_uuid()), 'hex'), 18, 14) AS id,
             ev.id AS event_id, ev.organization_id, ep.id AS endpoint_id, ev.type, ev.data, ev.created_at
      FROM ev
      JOIN webhook_endpoints ep ON ep.organization_id = ${org('ev')} AND ep.active
        AND (ep.events ? ev.type OR (ep.events ? '*' AND ev.type = ANY(string_to_array($2::text, ','))))
    )${
      perOrg
        ? ''
        : `, ins AS (
      INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event, body)
      SELECT m.id, m.organization_id, m.endpoint_id, m.event_id, m.type, ${BODY}
      FROM made m
    )`
    }, reached AS (
      SELECT ev.tx, ev.organization_id, max(ev.id) AS last,
             EXISTS (SELECT 1 FROM events e
                     WHERE e.tx = ev.tx AND e.organization_id = ${org('ev')} AND e.id > max(ev.id)) AS more
      FROM ev GROUP BY ev.tx, ev.organization_id
    ), done AS (
      DELETE FROM event_batches x USING reached r
      WHERE x.tx = r.tx AND x.organization_id = ${org('r')} AND NOT r.more
    ), progress AS (
      UPDATE event_batches x SET fanned_to = r.last FROM reached r
      WHERE x.tx = r.tx AND x.organization_id = ${org('r')} AND r.more
    )
    ${
      perOrg
        ? `SELECT (SELECT count(*) FROM ev)::int AS n, m.id, m.endpoint_id, m.event_id, m.type AS event, ${BODY} AS body
           FROM (SELECT 1) one LEFT JOIN made m ON true`
        : 'SELECT count(*)::int FROM ev'
    }`;
}

/** A delivery's body, the layout of `deliveryBody`, with the event's data as the JSON text it was emitted with. */
const BODY = `'{"id":' || to_json(m.id)::text || ',"event":' || to_json(m.type)::text
             || ',"timestamp":"' || to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
             || '","organizationId":' || to_json(m.organization_id)::text || ',"data":' || m.data::text || '}'`;

const FAN_OUT = { text: fanOutText(false) };
const FAN_OUT_OF = { text: fanOutText(true) };
