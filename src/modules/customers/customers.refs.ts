import { and, eq, inArray, isNull } from 'drizzle-orm';
import { customers, properties, services } from '../../db/schema/index.js';
import { invalidField } from '../../platform/errors.js';
import type { Ctx } from '../../platform/tenancy.js';

/*
 * Reference checks other modules make on ids given in a request body: a customer,
 * property or service that does not exist, is deleted, or belongs to another
 * organization is a 400 naming the field (the caller's body is wrong), while a
 * missing record in the URL is a 404 (handled by each module).
 */

export type CustomerRow = typeof customers.$inferSelect;

/** The live (not soft-deleted) customer `id` of this organization, or 400 on `field`. */
export async function requireCustomer(ctx: Ctx, id: string, field = 'customerId'): Promise<CustomerRow> {
  const [row] = await ctx.tx
    .select()
    .from(customers)
    .where(and(eq(customers.organizationId, ctx.organizationId), eq(customers.id, id), isNull(customers.deletedAt)));
  if (!row) throw invalidField(field, `no customer ${id}`);
  return row;
}

/** A property that belongs to `customerId` in this organization, or 400 on `field`. */
export async function requireProperty(ctx: Ctx, customerId: string, propertyId: string, field = 'propertyId') {
  const [row] = await ctx.tx
    .select()
    .from(properties)
    .where(
      and(
        eq(properties.organizationId, ctx.organizationId),
        eq(properties.id, propertyId),
        eq(properties.customerId, customerId),
      ),
    );
  if (!row) throw invalidField(field, `no property ${propertyId} for customer ${customerId}`);
  return row;
}

/** Catalog services by id (for line items with `serviceId`); any unknown id is a 400 on `field`. */
export async function requireServices(ctx: Ctx, ids: string[], field = 'lineItems.serviceId') {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map<string, typeof services.$inferSelect>();
  const rows = await ctx.tx
    .select()
    .from(services)
    .where(and(eq(services.organizationId, ctx.organizationId), inArray(services.id, unique)));
  const byId = new Map(rows.map((r) => [r.id, r]));
  const missing = unique.find((id) => !byId.has(id));
  if (missing) throw invalidField(field, `no service ${missing}`);
  return byId;
}
