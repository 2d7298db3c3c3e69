import { and, eq, inArray } from 'drizzle-orm';
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
