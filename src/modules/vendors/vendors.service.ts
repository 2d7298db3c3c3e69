import { and, eq, type SQL } from 'drizzle-orm';
import { isForeignKeyViolation, sqlStateOf } from '../../db/pg-errors.js';
import { vendors } from '../../db/schema/index.js';
import { AppError, invalidField, notFound } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { ownedRows } from '../../platform/owned-rows.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import type { Ctx } from '../../platform/tenancy.js';
import { getOrgSettings } from '../settings/settings.service.js';
import type { CreateVendorInput, UpdateVendorInput } from './vendors.schemas.js';

export type VendorRow = typeof vendors.$inferSelect;

export function vendorView(r: VendorRow, defaultTerms: number) {
  return {
    id: r.id,
    name: r.name,
    email: r.email,
    phone: r.phone,
    address: r.address,
    paymentTermsDays: r.paymentTermsDays ?? defaultTerms,
    customPaymentTerms: r.paymentTermsDays !== null,
    notes: r.notes,
    active: r.active,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

const blankToNull = (v: string | null | undefined) => (v === undefined ? undefined : v?.trim() || null);

function columnsOf(input: UpdateVendorInput): Partial<VendorRow> {
  const out: Partial<VendorRow> = {};
  if (input.name !== undefined) out.name = input.name.trim();
  for (const k of ['email', 'phone', 'address', 'notes'] as const) {
    const v = blankToNull(input[k]);
    if (v !== undefined) out[k] = v;
  }
  if (input.paymentTermsDays !== undefined) out.paymentTermsDays = input.paymentTermsDays;
  if (input.active !== undefined) out.active = input.active;
  return out;
}

const { mine, find: findVendor } = ownedRows(vendors, 'Vendor');
const terms = async (ctx: Ctx) => (await getOrgSettings(ctx)).paymentTermsDays;

export async function createVendor(ctx: Ctx, input: CreateVendorInput) {
  const values = columnsOf(input) as Partial<VendorRow> & { name: string };
  const [row] = await ctx.tx
    .insert(vendors)
    .values({ ...values, id: newId('ven'), organizationId: ctx.organizationId })
    .returning();
  return vendorView(row as VendorRow, await terms(ctx));
}

export async function listVendors(ctx: Ctx, filter: { active?: boolean | undefined }, page: Page) {
  const where: SQL[] = [eq(vendors.organizationId, ctx.organizationId)];
  if (filter.active !== undefined) where.push(eq(vendors.active, filter.active));
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, vendors, and(...where), page);
  const t = await terms(ctx);
  return { rows: rows.map((r) => vendorView(r, t)), ...more };
}

export async function getVendor(ctx: Ctx, id: string) {
  return vendorView(await findVendor(ctx, id), await terms(ctx));
}

export async function updateVendor(ctx: Ctx, id: string, input: UpdateVendorInput) {
  const [row] = await ctx.tx
    .update(vendors)
    .set({ ...columnsOf(input), updatedAt: new Date() })
    .where(mine(ctx, id))
    .returning();
  if (!row) throw notFound('Vendor');
  return vendorView(row, await terms(ctx));
}

/** Orders, bills and payments keep their vendor (ON DELETE RESTRICT): such a vendor → 409, deactivate it instead. */
export async function deleteVendor(ctx: Ctx, id: string) {
  try {
    const rows = await ctx.tx.delete(vendors).where(mine(ctx, id)).returning({ id: vendors.id });
    if (rows.length === 0) throw notFound('Vendor');
  } catch (err) {
    // ON DELETE RESTRICT reports 23001 (restrict_violation), NO ACTION 23503.
    if (isForeignKeyViolation(err) || sqlStateOf(err) === '23001') {
      throw new AppError('CONFLICT', 'Vendor has purchase orders or bills; set active to false instead');
    }
    throw err;
  }
}

/**
 * A vendor named in a request body (a purchase order's, a bill's, a payment's):
 * missing, another organization's, or inactive → 400 naming the field. Locked
 * FOR SHARE so it cannot be deleted while the new document is written. Paying
 * an inactive vendor's existing bills stays possible (allowInactive).
 */
export async function requireVendor(ctx: Ctx, id: string, opts: { allowInactive?: boolean } = {}): Promise<VendorRow> {
  const [row] = await ctx.tx.select().from(vendors).where(mine(ctx, id)).for('share');
  if (!row) throw invalidField('vendorId', 'no such vendor in this organization');
  if (!row.active && !opts.allowInactive) throw invalidField('vendorId', 'the vendor is inactive');
  return row;
}
