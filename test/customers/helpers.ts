import { and, asc, eq, sql } from 'drizzle-orm';
import { customers, events } from '../../src/db/schema/index.js';
import type { Harness } from '../harness.js';

/** Events of one organization, oldest first, read through the harness's own connection. */
export async function eventsOf(h: Harness, organizationId: string) {
  return h.admin.db
    .select({ type: events.type, data: events.data })
    .from(events)
    .where(eq(events.organizationId, organizationId))
    .orderBy(asc(events.createdAt), asc(events.id));
}

export async function countRows(h: Harness, organizationId: string) {
  const [c] = await h.admin.db
    .select({ n: sql<number>`count(*)::int` })
    .from(customers)
    .where(eq(customers.organizationId, organizationId));
  const [e] = await h.admin.db
    .select({ n: sql<number>`count(*)::int` })
    .from(events)
    .where(eq(events.organizationId, organizationId));
  return { customers: Number(c?.n), events: Number(e?.n) };
}

export async function rawCustomer(h: Harness, organizationId: string, id: string) {
  const [row] = await h.admin.db
    .select()
    .from(customers)
    .where(and(eq(customers.organizationId, organizationId), eq(customers.id, id)));
  return row;
}
