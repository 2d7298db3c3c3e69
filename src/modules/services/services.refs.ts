import { and, asc, eq, inArray } from 'drizzle-orm';
import { services } from '../../db/schema/index.js';
import { invalidField } from '../../platform/errors.js';
import type { Ctx } from '../../platform/tenancy.js';

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

/** The services offered on the public booking form: active and bookable, by name (operations.md §12). */
export async function bookableServices(
  ctx: Ctx,
): Promise<Array<{ id: string; name: string; description: string | null }>> {
  return ctx.tx
    .select({ id: services.id, name: services.name, description: services.description })
    .from(services)
    .where(and(eq(services.organizationId, ctx.organizationId), eq(services.active, true), eq(services.bookable, true)))
    .orderBy(asc(services.name), asc(services.id));
}

/** The catalog services among `ids` that still exist, in the order given (the rest are left out). */
export async function servicesStillListed(ctx: Ctx, ids: string[]) {
  if (ids.length === 0) return [];
  const rows = await ctx.tx
    .select()
    .from(services)
    .where(and(eq(services.organizationId, ctx.organizationId), inArray(services.id, [...new Set(ids)])));
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id)).filter((r) => r !== undefined);
}
