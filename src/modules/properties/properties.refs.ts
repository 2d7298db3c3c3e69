import { and, eq, inArray } from 'drizzle-orm';
import { properties } from '../../db/schema/index.js';
import type { Ctx } from '../../platform/tenancy.js';
import { refreshAddressSearch } from './properties.service.js';

/**
 * A customer is anonymized (src/flows/anonymize-customer.ts): the personal parts of their properties
 * go too (name, address, access notes, gate code, coordinates), in the same transaction;
 * the street reads `placeholder`.
 * The properties module owns the table, so customers ask here.
 */
export async function anonymizePropertiesOf(ctx: Ctx, customerId: string, placeholder: string, now: Date) {
  await ctx.tx
    .update(properties)
    .set({
      name: null,
      street: placeholder,
      city: null,
      state: null,
      zip: null,
      accessNotes: null,
      gateCode: null,
      lat: null,
      lng: null,
      updatedAt: now,
    })
    .where(and(eq(properties.organizationId, ctx.organizationId), eq(properties.customerId, customerId)));
  // The erased addresses leave customer search too.
  await refreshAddressSearch(ctx, customerId);
}

/** A property of this organization by id, if any (a document's service address). */
export async function findProperty(ctx: Ctx, id: string) {
  const [row] = await ctx.tx
    .select()
    .from(properties)
    .where(and(eq(properties.organizationId, ctx.organizationId), eq(properties.id, id)));
  return row;
}

/** The lines of the property a document is for (where the work is done): its name, street, city line. */
export async function serviceAddressOf(ctx: Ctx, propertyId: string | null): Promise<string[] | undefined> {
  if (propertyId === null) return undefined;
  const p = await findProperty(ctx, propertyId);
  if (!p) return undefined;
  const lines = [p.street, [p.city, [p.state, p.zip].filter(Boolean).join(' ')].filter(Boolean).join(', ')].filter(
    (x): x is string => Boolean(x),
  );
  return p.name && lines.length > 0 ? [p.name, ...lines] : lines;
}

/** The properties of this organization with these ids (for `expand=property` on lists). */
export async function propertiesByIds(ctx: Ctx, ids: string[]) {
  if (ids.length === 0) return [];
  return ctx.tx
    .select()
    .from(properties)
    .where(and(eq(properties.organizationId, ctx.organizationId), inArray(properties.id, ids)));
}
