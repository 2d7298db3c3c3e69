import { and, asc, eq, inArray, isNull, or, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { customerSearch, customers, properties } from '../../db/schema/index.js';
import { invalidField } from '../../platform/errors.js';
import type { Ctx } from '../../platform/tenancy.js';
import { anyCustomer } from './customers.rows.js';
import { addressSearchText, SEP } from './customers.search.js';

export { anyCustomer, liveCustomer } from './customers.rows.js';

/*
 * Reference checks other modules make on ids given in a request body: a customer
 * or property that does not exist, is deleted, or belongs to another
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

/** Several live customers in one query (batch billing), or 400 on `field` naming the first missing one. */
export async function requireCustomers(ctx: Ctx, ids: string[], field: string): Promise<Map<string, CustomerRow>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await ctx.tx
    .select()
    .from(customers)
    .where(
      and(eq(customers.organizationId, ctx.organizationId), inArray(customers.id, unique), isNull(customers.deletedAt)),
    );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const missing = unique.find((id) => !byId.has(id));
  if (missing) throw invalidField(field, `no customer ${missing}`);
  return byId;
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

export type PropertyRow = typeof properties.$inferSelect;

/**
 * Properties by id whose customer is live, in this organization; an unknown, foreign or
 * deleted one (or one whose customer is deleted) is a 400 on `field(i)` of the first bad id.
 */
export async function requireProperties(
  ctx: Ctx,
  ids: string[],
  field: (index: number) => string = (i) => `propertyIds[${i}]`,
): Promise<Map<string, PropertyRow>> {
  const found = await liveProperties(ctx, ids);
  const bad = ids.findIndex((id) => !found.has(id));
  if (bad >= 0) throw invalidField(field(bad), `no property ${ids[bad]}`);
  return found;
}

/** The live properties among `ids` (customer not deleted), by id; the rest are left out. */
export async function liveProperties(ctx: Ctx, ids: string[]): Promise<Map<string, PropertyRow>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await ctx.tx
    .select({ property: properties })
    .from(properties)
    .innerJoin(customers, eq(customers.id, properties.customerId))
    .where(
      and(
        eq(properties.organizationId, ctx.organizationId),
        inArray(properties.id, unique),
        isNull(customers.deletedAt),
      ),
    );
  return new Map(rows.map((r) => [r.property.id, r.property]));
}
/** The customers among `ids` (soft-deleted ones included), by id; the rest are left out. */
export async function customersByIds(ctx: Ctx, ids: string[]): Promise<Map<string, CustomerRow>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await ctx.tx
    .select()
    .from(customers)
    .where(and(eq(customers.organizationId, ctx.organizationId), inArray(customers.id, unique)));
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * Customers of several organizations by (organization, id), read in one statement of a
 * cross-tenant transaction (`asPlatform`: the texts worker checks the consent and number of a
 * whole claimed batch at once), keyed `organizationId:id`; the rest are left out.
 */
export async function customersOfOrganizations(
  tx: Tx,
  keys: Array<{ organizationId: string; id: string }>,
): Promise<Map<string, CustomerRow>> {
  if (keys.length === 0) return new Map();
  const pairs = sql.join(
    keys.map((k) => sql`(${k.organizationId}, ${k.id})`),
    sql`, `,
  );
  const rows = await tx
    .select()
    .from(customers)
    .where(sql`(${customers.organizationId}, ${customers.id}) IN (${pairs})`);
  return new Map(rows.map((r) => [`${r.organizationId}:${r.id}`, r]));
}

/** A customer the organization has (soft-deleted ones included: a sent document keeps its customer), if any. */
export async function findCustomer(ctx: Ctx, id: string): Promise<CustomerRow | undefined> {
  const [row] = await ctx.tx
    .select()
    .from(customers)
    .where(and(eq(customers.organizationId, ctx.organizationId), eq(customers.id, id)));
  return row;
}

/** A customer the organization has (soft-deleted ones included), or 404. */
export const customerById = (ctx: Ctx, id: string): Promise<CustomerRow> => anyCustomer.find(ctx, id);

/** How a customer is named on documents, mail and contracts: first and last name. */
export const customerName = (c: { firstName: string; lastName: string | null }) =>
  [c.firstName, c.lastName].filter(Boolean).join(' ');

/** An address as lines: the street, then "city, ST zip" (empty parts left out). */
export function addressLines(street: string | null, city: string | null, state: string | null, zip: string | null) {
  const cityLine = [city, [state, zip].filter(Boolean).join(' ')].filter(Boolean).join(', ');
  return [street, cityLine].filter((x): x is string => Boolean(x));
}

/** The same address on one line ("1 Elm St, Springfield, IL 62701"). */
export const addressLine = (street: string | null, city: string | null, state: string | null, zip: string | null) =>
  addressLines(street, city, state, zip).join(', ');

/**
 * The customer's properties' addresses, as customer search finds them (`search=Oak Ave`): the
 * properties module hands them over after each change to the customer's properties. They
 * replace the previous ones at the end of the indexed text (the customer's own part stays).
 */
export async function setPropertySearchText(
  ctx: Ctx,
  customerId: string,
  addresses: ReadonlyArray<{ street: string | null; city: string | null; state: string | null; zip: string | null }>,
): Promise<void> {
  const text = addresses.map(addressSearchText).join(SEP);
  await ctx.tx
    .update(customerSearch)
    .set({
      searchText: sql`left(${customerSearch.searchText}, length(${customerSearch.searchText}) - length(${customerSearch.propertyText})) || ${text}::text`,
      propertyText: text,
    })
    .where(and(eq(customerSearch.organizationId, ctx.organizationId), eq(customerSearch.customerId, customerId)));
}

/** The live customer whose `phoneE164` is `e164` (an inbound text's sender), the oldest when several share it. */
export async function customerByPhoneE164(ctx: Ctx, e164: string): Promise<CustomerRow | undefined> {
  const [row] = await ctx.tx
    .select()
    .from(customers)
    .where(
      and(eq(customers.organizationId, ctx.organizationId), eq(customers.phoneE164, e164), isNull(customers.deletedAt)),
    )
    .orderBy(customers.createdAt, customers.id)
    .limit(1);
  return row;
}

export { recordSmsConsent } from './customers.consent.js';

/**
 * The live customer reached by this email (any case) or phone (same digits), oldest first: the
 * customer a request from the public is matched to (operations.md §12).
 */
export async function customerByContact(
  ctx: Ctx,
  email: string | null,
  phone: string | null,
): Promise<CustomerRow | undefined> {
  const digits = phone?.replace(/\D/g, '') ?? '';
  const byEmail = email ? sql`lower(${customers.email}) = ${email.toLowerCase()}` : undefined;
  const byPhone = digits.length >= 7 ? sql`regexp_replace(${customers.phone}, '\\D', '', 'g') = ${digits}` : undefined;
  if (!byEmail && !byPhone) return undefined;
  const [row] = await ctx.tx
    .select()
    .from(customers)
    .where(and(eq(customers.organizationId, ctx.organizationId), isNull(customers.deletedAt), or(byEmail, byPhone)))
    .orderBy(asc(customers.createdAt), asc(customers.id))
    .limit(1);
  return row;
}
