import { and, count, eq } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { events } from '../../src/db/schema/index.js';
import { caller, type Harness, type TestUser } from '../harness.js';

/** The caller's member id (mem_…) in their active organization. */
export async function memberIdOf(owner: TestUser, user: TestUser = owner): Promise<string> {
  const res = await owner.call('GET', '/api/members');
  const found = (res.json().data as Array<{ id: string; userId: string }>).find((m) => m.userId === user.userId);
  if (!found) throw new Error('member not found');
  return found.id;
}

/** Rows of a tenant table in one organization (read as the test's superuser connection). */
export async function countRows(h: Harness, table: PgTable & { organizationId: unknown }, organizationId: string) {
  const t = table as PgTable & { organizationId: Parameters<typeof eq>[0] };
  const [row] = await h.admin.db.select({ n: count() }).from(t).where(eq(t.organizationId, organizationId));
  return Number(row?.n ?? 0);
}

export async function countEvents(h: Harness, organizationId: string, type?: string) {
  const where = type
    ? and(eq(events.organizationId, organizationId), eq(events.type, type))
    : eq(events.organizationId, organizationId);
  const [row] = await h.admin.db.select({ n: count() }).from(events).where(where);
  return Number(row?.n ?? 0);
}

/** Creates a device token for `memberId` and returns a caller presenting it. */
export async function deviceCaller(h: Harness, by: TestUser, memberId?: string) {
  const res = await by.call('POST', '/api/crew-tracking/devices', { name: 'Phone', ...(memberId ? { memberId } : {}) });
  if (res.statusCode !== 201) throw new Error(`device failed: ${res.statusCode} ${res.body}`);
  const data = res.json().data as { id: string; token: string; memberId: string };
  return { ...data, call: caller(h.app, { authorization: `Bearer ${data.token}` }) };
}
