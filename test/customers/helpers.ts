import { and, eq } from 'drizzle-orm';
import { customers } from '../../src/db/schema/index.js';
import { countEvents, countRows } from '../factories.js';
import type { Harness } from '../harness.js';

/** What a refused request must leave as it was: the organization's customers and events. */
export async function customersAndEvents(h: Harness, organizationId: string) {
  return { customers: await countRows(h, customers, organizationId), events: await countEvents(h, organizationId) };
}

export async function rawCustomer(h: Harness, organizationId: string, id: string) {
  const [row] = await h.admin.db
    .select()
    .from(customers)
    .where(and(eq(customers.organizationId, organizationId), eq(customers.id, id)));
  return row;
}
