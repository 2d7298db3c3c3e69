import { and, asc, eq } from 'drizzle-orm';
import { customers, events, jobs, properties } from '../../src/db/schema/index.js';
import { newId } from '../../src/platform/ids.js';
import { inTenant } from '../../src/platform/tenancy.js';
import type { Harness, TestUser } from '../harness.js';

/*
 * Customers and properties are made directly in the database (inside the tenant,
 * as the application role), so these tests do not depend on the customers module.
 */
const actorOf = (user: TestUser) => ({ kind: 'user' as const, id: user.userId, role: 'owner' as const });

export async function makeCustomer(
  h: Harness,
  owner: TestUser,
  fields: Partial<typeof customers.$inferInsert> = {},
): Promise<typeof customers.$inferSelect> {
  return inTenant(h.database.db, owner.organizationId, actorOf(owner), async (ctx) => {
    const [row] = await ctx.tx
      .insert(customers)
      .values({
        id: newId('cus'),
        organizationId: ctx.organizationId,
        firstName: 'Dana',
        lastName: 'Reyes',
        email: `dana-${newId('x').slice(-6)}@example.com`,
        billingAddress: '12 Elm St',
        billingCity: 'Springfield',
        billingState: 'IL',
        billingZip: '62704',
        ...fields,
      })
      .returning();
    return row as typeof customers.$inferSelect;
  });
}

export async function makeProperty(h: Harness, owner: TestUser, customerId: string) {
  return inTenant(h.database.db, owner.organizationId, actorOf(owner), async (ctx) => {
    const [row] = await ctx.tx
      .insert(properties)
      .values({
        id: newId('prp'),
        organizationId: ctx.organizationId,
        customerId,
        street: '400 Oak Ave',
        city: 'Springfield',
        state: 'IL',
        zip: '62704',
      })
      .returning();
    return row as typeof properties.$inferSelect;
  });
}

/** A job row in any status, written directly (to set up a transition under test). */
export async function insertJob(
  h: Harness,
  owner: TestUser,
  customerId: string,
  status: string,
  scheduledDate = '2026-06-01',
) {
  return inTenant(h.database.db, owner.organizationId, actorOf(owner), async (ctx) => {
    const [row] = await ctx.tx
      .insert(jobs)
      .values({ id: newId('job'), organizationId: ctx.organizationId, customerId, status, scheduledDate })
      .returning();
    return row as typeof jobs.$inferSelect;
  });
}

/** The organization's outbox, oldest first (read as the superuser test connection). */
export async function eventsOf(h: Harness, organizationId: string) {
  return h.admin.db
    .select()
    .from(events)
    .where(eq(events.organizationId, organizationId))
    .orderBy(asc(events.createdAt), asc(events.id));
}

export async function eventsOfType(h: Harness, organizationId: string, type: string) {
  return h.admin.db
    .select()
    .from(events)
    .where(and(eq(events.organizationId, organizationId), eq(events.type, type)));
}
