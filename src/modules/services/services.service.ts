import { and, eq, type SQL } from 'drizzle-orm';
import { isForeignKeyViolation } from '../../db/pg-errors.js';
import { services } from '../../db/schema/index.js';
import { AppError, invalidState, notFound } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { fromCents, toCents } from '../../platform/money.js';
import { ownedRows } from '../../platform/owned-rows.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import type { Ctx } from '../../platform/tenancy.js';
import type { CreateServiceInput, SERVICE_UNITS, UpdateServiceInput } from './services.schemas.js';

type Row = typeof services.$inferSelect;

export function serviceView(r: Row) {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    unit: r.unit as (typeof SERVICE_UNITS)[number],
    unitPrice: fromCents(r.unitPriceCents),
    taxable: r.taxable,
    active: r.active,
    bookable: r.bookable,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

/** Checks money first (400 before any write), then maps request fields to columns. */
function columnsOf(input: UpdateServiceInput): Partial<Row> {
  const out: Partial<Row> = {};
  if (input.unitPrice !== undefined) out.unitPriceCents = toCents(input.unitPrice, 'unitPrice');
  if (input.name !== undefined) out.name = input.name.trim();
  if (input.description !== undefined) out.description = input.description?.trim() || null;
  if (input.unit !== undefined) out.unit = input.unit;
  if (input.taxable !== undefined) out.taxable = input.taxable;
  if (input.active !== undefined) out.active = input.active;
  if (input.bookable !== undefined) out.bookable = input.bookable;
  return out;
}

const { mine, find: findService } = ownedRows(services, 'Service');

export async function createService(ctx: Ctx, input: CreateServiceInput) {
  const values = columnsOf(input) as Partial<Row> & { name: string; unitPriceCents: number };
  const [row] = await ctx.tx
    .insert(services)
    .values({ ...values, id: newId('svc'), organizationId: ctx.organizationId })
    .returning();
  return serviceView(row as Row);
}

export async function listServices(ctx: Ctx, filter: { active?: boolean | undefined }, page: Page) {
  const conditions: SQL[] = [eq(services.organizationId, ctx.organizationId)];
  if (filter.active !== undefined) conditions.push(eq(services.active, filter.active));
  const where = and(...conditions);
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, services, where, page);
  return { rows: rows.map(serviceView), ...more };
}

export async function getService(ctx: Ctx, id: string) {
  return serviceView(await findService(ctx, id));
}

export async function updateService(ctx: Ctx, id: string, input: UpdateServiceInput) {
  const changes = columnsOf(input);
  const [row] = await ctx.tx
    .update(services)
    .set({ ...changes, updatedAt: new Date() })
    .where(mine(ctx, id))
    .returning();
  if (!row) throw notFound('Service');
  return serviceView(row);
}

/**
 * The service a reprice changes (`POST /api/services/{id}/reprice`), locked: 404 when it is
 * not the organization's, 409 when it is inactive (retired from new documents: activate it first).
 */
export async function serviceToReprice(ctx: Ctx, id: string): Promise<Row> {
  const row = await findService(ctx, id, true);
  if (!row.active) throw invalidState(`Service ${id} is inactive: set active to true before repricing it`);
  return row;
}

/** The catalog's new default price (for lines written from now on); the service as it is then. */
export async function setServicePrice(ctx: Ctx, id: string, unitPriceCents: number) {
  const [row] = await ctx.tx
    .update(services)
    .set({ unitPriceCents, updatedAt: new Date() })
    .where(mine(ctx, id))
    .returning();
  if (!row) throw notFound('Service');
  return serviceView(row);
}

/** Line items keep their own copy of name and price, so a service may go; one still referenced → 409. */
export async function deleteService(ctx: Ctx, id: string) {
  try {
    const rows = await ctx.tx.delete(services).where(mine(ctx, id)).returning({ id: services.id });
    if (rows.length === 0) throw notFound('Service');
  } catch (err) {
    if (isForeignKeyViolation(err)) {
      throw new AppError('CONFLICT', 'Service is referenced by line items; set active to false instead');
    }
    throw err;
  }
}
