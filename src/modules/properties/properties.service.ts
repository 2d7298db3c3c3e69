import { and, eq, type SQL } from 'drizzle-orm';
import { isForeignKeyViolation } from '../../db/pg-errors.js';
import { properties } from '../../db/schema/index.js';
import { AppError, invalidField, notFound } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { ownedRows } from '../../platform/owned-rows.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import type { Ctx } from '../../platform/tenancy.js';
import { requireCustomer, setPropertySearchText } from '../customers/customers.refs.js';
import type { CreatePropertyInput, UpdatePropertyInput } from './properties.schemas.js';

type Row = typeof properties.$inferSelect;

export function propertyView(r: Row) {
  const stateZip = [r.state, r.zip].filter(Boolean).join(' ');
  return {
    id: r.id,
    customerId: r.customerId,
    name: r.name,
    street: r.street,
    city: r.city,
    state: r.state,
    zip: r.zip,
    address: [r.street, r.city, stateZip].filter(Boolean).join(', '),
    accessNotes: r.accessNotes,
    gateCode: r.gateCode,
    lotSize: r.lotSize,
    lat: r.lat,
    lng: r.lng,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

const TEXT = ['name', 'street', 'city', 'state', 'zip', 'accessNotes', 'gateCode'] as const;
/** The parts of a property customer search reads. */
const TEXT_ADDRESS = ['street', 'city', 'state', 'zip'] as const;

function columnsOf(input: UpdatePropertyInput): Partial<Row> {
  const out: Partial<Row> = {};
  for (const key of TEXT) {
    const value = input[key];
    if (value === undefined) continue;
    const trimmed = value === null ? '' : value.trim();
    (out as Record<string, string | null>)[key] = trimmed === '' ? null : trimmed;
  }
  for (const key of ['lotSize', 'lat', 'lng'] as const) if (input[key] !== undefined) out[key] = input[key];
  return out;
}

/** A point needs both coordinates: one without the other is a 400 naming the missing one. */
function checkCoordinates(r: { lat?: number | null | undefined; lng?: number | null | undefined }) {
  const hasLat = r.lat !== null && r.lat !== undefined;
  const hasLng = r.lng !== null && r.lng !== undefined;
  if (hasLat && !hasLng) throw invalidField('lng', 'is required together with lat');
  if (hasLng && !hasLat) throw invalidField('lat', 'is required together with lng');
}

/** Customer search finds a customer by its properties' addresses: handed over after each change. */
export async function refreshAddressSearch(ctx: Ctx, customerId: string): Promise<void> {
  const addresses = await ctx.tx
    .select({ street: properties.street, city: properties.city, state: properties.state, zip: properties.zip })
    .from(properties)
    .where(and(eq(properties.organizationId, ctx.organizationId), eq(properties.customerId, customerId)))
    .orderBy(properties.id);
  await setPropertySearchText(ctx, customerId, addresses);
}

const { mine, find: findProperty } = ownedRows(properties, 'Property');

export async function createProperty(ctx: Ctx, input: CreatePropertyInput) {
  checkCoordinates(input);
  await requireCustomer(ctx, input.customerId);
  const [row] = await ctx.tx
    .insert(properties)
    .values({
      ...columnsOf(input),
      street: input.street.trim(),
      id: newId('prp'),
      organizationId: ctx.organizationId,
      customerId: input.customerId,
    })
    .returning();
  await refreshAddressSearch(ctx, input.customerId);
  return propertyView(row as Row);
}

export async function listProperties(ctx: Ctx, filter: { customerId?: string | undefined }, page: Page) {
  const conditions: SQL[] = [eq(properties.organizationId, ctx.organizationId)];
  if (filter.customerId !== undefined) conditions.push(eq(properties.customerId, filter.customerId));
  const where = and(...conditions);
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, properties, where, page);
  return { rows: rows.map(propertyView), ...more };
}

export async function getProperty(ctx: Ctx, id: string) {
  return propertyView(await findProperty(ctx, id));
}

export async function updateProperty(ctx: Ctx, id: string, input: UpdatePropertyInput) {
  const current = await findProperty(ctx, id, true);
  const changes = columnsOf(input);
  if (input.street !== undefined && !changes.street) throw invalidField('street', 'must not be empty');
  checkCoordinates({ ...current, ...changes });
  const [row] = await ctx.tx
    .update(properties)
    .set({ ...changes, updatedAt: new Date() })
    .where(mine(ctx, id))
    .returning();
  if (TEXT_ADDRESS.some((k) => changes[k] !== undefined)) await refreshAddressSearch(ctx, current.customerId);
  return propertyView(row as Row);
}

export async function deleteProperty(ctx: Ctx, id: string) {
  try {
    const rows = await ctx.tx
      .delete(properties)
      .where(mine(ctx, id))
      .returning({ id: properties.id, customerId: properties.customerId });
    if (rows.length === 0) throw notFound('Property');
    await refreshAddressSearch(ctx, (rows[0] as { customerId: string }).customerId);
  } catch (err) {
    if (isForeignKeyViolation(err)) {
      throw new AppError('CONFLICT', 'Property is referenced by other records (jobs, invoices…) and cannot be deleted');
    }
    throw err;
  }
}
