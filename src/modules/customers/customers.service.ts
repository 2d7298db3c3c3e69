import { and, arrayContains, desc, eq, inArray, isNull, or, type SQL, sql } from 'drizzle-orm';
import { customerSearch, customers, properties } from '../../db/schema/index.js';
import { invalidState, notFound } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { Page } from '../../platform/pagination.js';
import type { Ctx } from '../../platform/tenancy.js';
import { emit } from '../../webhooks/outbox.js';
import type { CreateCustomerInput, CustomerStatus, CustomerType, UpdateCustomerInput } from './customers.schemas.js';
import { searchPatterns, searchTextOf } from './customers.search.js';

type Row = typeof customers.$inferSelect;

export const fullName = (r: { firstName: string; lastName: string | null }) =>
  `${r.firstName} ${r.lastName ?? ''}`.trim();

/** "street, city, state zip" from the billing parts that are present. */
export function addressLine(r: Pick<Row, 'billingAddress' | 'billingCity' | 'billingState' | 'billingZip'>): string {
  const stateZip = [r.billingState, r.billingZip].filter(Boolean).join(' ');
  return [r.billingAddress, r.billingCity, stateZip].filter(Boolean).join(', ');
}

/** The REST shape (decisions §4), also the `customer` of webhook events. */
export function customerView(r: Row) {
  return {
    id: r.id,
    name: fullName(r),
    firstName: r.firstName,
    lastName: r.lastName,
    company: r.company,
    customerType: r.customerType as CustomerType,
    email: r.email,
    additionalEmails: r.additionalEmails,
    phone: r.phone,
    secondaryPhone: r.secondaryPhone,
    address: addressLine(r),
    billingAddress: r.billingAddress,
    billingCity: r.billingCity,
    billingState: r.billingState,
    billingZip: r.billingZip,
    notes: r.notes,
    tags: r.tags,
    taxExempt: r.taxExempt,
    status: r.status as CustomerStatus,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}
export type CustomerView = ReturnType<typeof customerView>;

/** Deactivate/reactivate as data: the status each action requires and the one it leads to. */
export const STATUS_TRANSITIONS = {
  deactivate: { from: 'active', to: 'inactive' },
  reactivate: { from: 'inactive', to: 'active' },
} as const satisfies Record<string, { from: CustomerStatus; to: CustomerStatus }>;
export type StatusAction = keyof typeof STATUS_TRANSITIONS;

const OPTIONAL_TEXT = [
  'lastName',
  'company',
  'email',
  'phone',
  'secondaryPhone',
  'billingAddress',
  'billingCity',
  'billingState',
  'billingZip',
  'notes',
] as const;

/** Request fields → column values: text trimmed, blank optional text stored as null, tags de-duplicated. */
function columnsOf(input: UpdateCustomerInput): Partial<Row> {
  const out: Partial<Row> = {};
  if (input.firstName !== undefined) out.firstName = input.firstName.trim();
  for (const key of OPTIONAL_TEXT) {
    const value = input[key];
    if (value === undefined) continue;
    const trimmed = value === null ? '' : value.trim();
    out[key] = trimmed === '' ? null : key === 'email' ? trimmed.toLowerCase() : trimmed;
  }
  if (input.customerType !== undefined) out.customerType = input.customerType;
  if (input.additionalEmails !== undefined) {
    out.additionalEmails = [...new Set(input.additionalEmails.map((e) => e.trim().toLowerCase()))];
  }
  if (input.tags !== undefined) out.tags = [...new Set(input.tags.map((t) => t.trim()))];
  if (input.taxExempt !== undefined) out.taxExempt = input.taxExempt;
  return out;
}

const searchTextOfRow = (r: Pick<Row, 'firstName' | 'lastName' | 'email' | 'phone'>) =>
  searchTextOf({ name: fullName(r), email: r.email, phone: r.phone });

/** Keeps the indexed copies (customer_search) in step with the row's search text and tags. */
async function writeSearchText(ctx: Ctx, row: Row, text: string) {
  await ctx.tx
    .insert(customerSearch)
    .values({ customerId: row.id, searchText: text, tags: row.tags })
    .onConflictDoUpdate({ target: customerSearch.customerId, set: { searchText: text, tags: row.tags } });
}

const live = (ctx: Ctx, id: string) =>
  and(eq(customers.organizationId, ctx.organizationId), eq(customers.id, id), isNull(customers.deletedAt));

/** A live customer of this organization, locked for the rest of the transaction; 404 otherwise. */
async function lockLive(ctx: Ctx, id: string): Promise<Row> {
  const [row] = await ctx.tx.select().from(customers).where(live(ctx, id)).for('update');
  if (!row) throw notFound('Customer');
  return row;
}

export async function createCustomer(ctx: Ctx, input: CreateCustomerInput): Promise<CustomerView> {
  const values = columnsOf(input) as Partial<Row> & { firstName: string };
  const id = newId('cus');
  const searchText = searchTextOfRow({ lastName: null, email: null, phone: null, ...values });
  const [row] = await ctx.tx
    .insert(customers)
    .values({ ...values, id, organizationId: ctx.organizationId, searchText })
    .returning();
  const created = row as Row;
  await writeSearchText(ctx, created, searchText);
  const view = customerView(created);
  await emit(ctx, 'customer.created', { customerId: id, customer: view });
  return view;
}

export interface CustomerFilter {
  search?: string | undefined;
  tag?: string | undefined;
  status?: CustomerStatus | undefined;
}

/**
 * The query behind the list: one page of live customers, newest first, plus the
 * number matching as an uncorrelated sub-select (computed once, saving a round
 * trip). Search goes through `customer_search` (see its schema comment) so the
 * trigram index serves it; the page itself comes from the partial
 * (organization, createdAt, id) index. Exposed so a test can EXPLAIN it.
 */
export function customerListQuery(ctx: Ctx, filter: CustomerFilter, page: Page) {
  const where = customerListWhere(ctx, filter);
  const count = sql<number>`(SELECT count(*)::int FROM ${customers} WHERE ${where})`;
  return ctx.tx
    .select({ customer: customers, total: count })
    .from(customers)
    .where(where)
    .orderBy(desc(customers.createdAt), desc(customers.id))
    .limit(page.limit)
    .offset(page.offset);
}

function customerListWhere(ctx: Ctx, filter: CustomerFilter) {
  const conditions: SQL[] = [eq(customers.organizationId, ctx.organizationId), isNull(customers.deletedAt)];
  if (filter.status) conditions.push(eq(customers.status, filter.status));
  if (filter.tag !== undefined) {
    conditions.push(
      inArray(
        customers.id,
        ctx.tx
          .select({ id: customerSearch.customerId })
          .from(customerSearch)
          .where(arrayContains(customerSearch.tags, [filter.tag])),
      ),
    );
  }
  const patterns = searchPatterns(filter.search ?? '');
  if (patterns.length > 0) {
    const matches = or(...patterns.map((p) => sql`${customerSearch.searchText} LIKE ${p}`));
    conditions.push(
      inArray(customers.id, ctx.tx.select({ id: customerSearch.customerId }).from(customerSearch).where(matches)),
    );
  }
  return and(...conditions);
}

export async function listCustomers(ctx: Ctx, filter: CustomerFilter, page: Page) {
  const rows = await customerListQuery(ctx, filter, page);
  let total = Number(rows[0]?.total ?? 0);
  if (rows.length === 0 && page.offset > 0) {
    // Past the last page there is no row to carry the count.
    const [row] = await ctx.tx
      .select({ n: sql<number>`count(*)::int` })
      .from(customers)
      .where(customerListWhere(ctx, filter));
    total = Number(row?.n ?? 0);
  }
  return { data: rows.map((r) => customerView(r.customer)), total };
}

export async function getCustomer(ctx: Ctx, id: string): Promise<CustomerView> {
  const [row] = await ctx.tx.select().from(customers).where(live(ctx, id));
  if (!row) throw notFound('Customer');
  return customerView(row);
}

export async function updateCustomer(ctx: Ctx, id: string, input: UpdateCustomerInput): Promise<CustomerView> {
  const current = await lockLive(ctx, id);
  const changes = columnsOf(input);
  const merged = { ...current, ...changes };
  const searchText = searchTextOfRow(merged);
  const [row] = await ctx.tx
    .update(customers)
    .set({ ...changes, searchText, updatedAt: new Date() })
    .where(live(ctx, id))
    .returning();
  const updated = row as Row;
  await writeSearchText(ctx, updated, searchText);
  const view = customerView(updated);
  await emit(ctx, 'customer.updated', { customerId: id, customer: view });
  return view;
}

/** Soft delete (spec 2.1): a tombstone; properties, invoices and the rest stay attached. */
export async function softDeleteCustomer(ctx: Ctx, id: string): Promise<void> {
  await lockLive(ctx, id);
  const now = new Date();
  await ctx.tx.update(customers).set({ deletedAt: now, updatedAt: now }).where(live(ctx, id));
  await emit(ctx, 'customer.deleted', { customerId: id });
}

export async function changeCustomerStatus(ctx: Ctx, id: string, action: StatusAction): Promise<CustomerView> {
  const current = await lockLive(ctx, id);
  const move = STATUS_TRANSITIONS[action];
  if (current.status !== move.from) {
    throw invalidState(`Customer is ${current.status}; ${action} needs an ${move.from} customer`);
  }
  const [row] = await ctx.tx
    .update(customers)
    .set({ status: move.to, updatedAt: new Date() })
    .where(live(ctx, id))
    .returning();
  const view = customerView(row as Row);
  await emit(ctx, 'customer.updated', { customerId: id, customer: view });
  return view;
}

/** Any customer of this organization, soft-deleted ones included (erasure must reach tombstones too). */
async function lockAny(ctx: Ctx, id: string): Promise<Row> {
  const [row] = await ctx.tx
    .select()
    .from(customers)
    .where(and(eq(customers.organizationId, ctx.organizationId), eq(customers.id, id)))
    .for('update');
  if (!row) throw notFound('Customer');
  return row;
}

export const ANONYMIZED_NAME = 'Anonymized';

/**
 * Erasure (decisions §4): every personal field of the customer and of its
 * properties (service addresses, gate codes, access notes, coordinates) is
 * replaced or cleared; ids, amounts and documents stay, so invoices and payments
 * keep adding up. Irreversible: nothing is copied anywhere first.
 */
export async function anonymizeCustomer(ctx: Ctx, id: string): Promise<CustomerView> {
  const current = await lockAny(ctx, id);
  if (current.anonymizedAt) throw invalidState('Customer is already anonymized');
  const now = new Date();
  const cleared = {
    firstName: ANONYMIZED_NAME,
    lastName: null,
    company: null,
    email: null,
    additionalEmails: [],
    phone: null,
    secondaryPhone: null,
    billingAddress: null,
    billingCity: null,
    billingState: null,
    billingZip: null,
    notes: null,
    tags: [],
  };
  const searchText = searchTextOfRow(cleared);
  const [row] = await ctx.tx
    .update(customers)
    .set({ ...cleared, searchText, anonymizedAt: now, updatedAt: now })
    .where(and(eq(customers.organizationId, ctx.organizationId), eq(customers.id, id)))
    .returning();
  const updated = row as Row;
  await writeSearchText(ctx, updated, searchText);
  await ctx.tx
    .update(properties)
    .set({
      name: null,
      street: ANONYMIZED_NAME,
      city: null,
      state: null,
      zip: null,
      accessNotes: null,
      gateCode: null,
      lat: null,
      lng: null,
      updatedAt: now,
    })
    .where(and(eq(properties.organizationId, ctx.organizationId), eq(properties.customerId, id)));
  const view = customerView(updated);
  await emit(ctx, 'customer.updated', { customerId: id, customer: view });
  return view;
}

/**
 * Genuine deletion: the row goes, and with it every row that references it
 * (each such table declares ON DELETE CASCADE on its customer_id), in this one
 * transaction. Soft-deleted customers can be hard-deleted too.
 */
export async function hardDeleteCustomer(ctx: Ctx, id: string): Promise<void> {
  await lockAny(ctx, id);
  await ctx.tx.delete(customers).where(and(eq(customers.organizationId, ctx.organizationId), eq(customers.id, id)));
  await emit(ctx, 'customer.deleted', { customerId: id });
}
