import { and, eq, isNull, type SQL, sql } from 'drizzle-orm';
import { rowsOf } from '../../db/client.js';
import { customerSearch, customerSmsConsents, customers } from '../../db/schema/index.js';
import { invalidState } from '../../platform/errors.js';
import { emit } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import { pageOfRows, rowExists } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import { next, statesAccepting, withArticle } from '../../platform/state-machine.js';
import type { Ctx } from '../../platform/tenancy.js';
import { parsedPhone } from './customers.phones.js';
import { anyCustomer, liveCustomer } from './customers.rows.js';
import type {
  CreateCustomerInput,
  CustomerType,
  SmsConsentSource,
  SmsConsentStatus,
  UpdateCustomerInput,
} from './customers.schemas.js';
import { addressSearchText, SEP, searchPatterns, searchTextOf } from './customers.search.js';
import { type CustomerAction, type CustomerStatus, customerMachine } from './customers.states.js';

type Row = typeof customers.$inferSelect;

export const fullName = (r: { firstName: string; lastName: string | null }) =>
  `${r.firstName} ${r.lastName ?? ''}`.trim();

/** "street, city, state zip" from the billing parts that are present. */
export function addressLine(r: Pick<Row, 'billingAddress' | 'billingCity' | 'billingState' | 'billingZip'>): string {
  // "street, city, state zip" from the parts present; concatenated rather than built as arrays
  // (filter + join), as it runs for every row of every customers page.
  const state = r.billingState || '';
  const zip = r.billingZip || '';
  const stateZip = state && zip ? `${state} ${zip}` : state || zip;
  const city = r.billingCity || '';
  let line = r.billingAddress || '';
  if (city) line = line ? `${line}, ${city}` : city;
  if (stateZip) line = line ? `${line}, ${stateZip}` : stateZip;
  return line;
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
    phoneE164: r.phoneE164,
    smsConsent: {
      status: r.smsConsent as SmsConsentStatus,
      updatedAt: r.smsConsentAt,
      source: r.smsConsentSource as SmsConsentSource | null,
    },
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}
export type CustomerView = ReturnType<typeof customerView>;

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

/**
 * Keeps the indexed copies (customer_search) in step with the row: its own search text, its
 * billing address and tags; the properties' addresses already there (`property_text`, written
 * by the properties module) are kept at the end.
 */
async function writeSearchText(ctx: Ctx, row: Row, text: string) {
  const billing = addressSearchText({
    street: row.billingAddress,
    city: row.billingCity,
    state: row.billingState,
    zip: row.billingZip,
  });
  const own = `${text}${SEP}${billing}${SEP}`;
  await ctx.tx
    .insert(customerSearch)
    .values({ customerId: row.id, organizationId: ctx.organizationId, searchText: own, tags: row.tags })
    .onConflictDoUpdate({
      target: [customerSearch.organizationId, customerSearch.customerId],
      set: { searchText: sql`${own} || ${customerSearch.propertyText}`, tags: row.tags },
    });
}

const live = (ctx: Ctx, id: string) => and(liveCustomer.mine(ctx, id), isNull(customers.deletedAt));

/** A live customer of this organization, locked for the rest of the transaction; 404 otherwise. */
const lockLive = (ctx: Ctx, id: string): Promise<Row> => liveCustomer.find(ctx, id, true);

export async function createCustomer(ctx: Ctx, input: CreateCustomerInput): Promise<CustomerView> {
  const values = columnsOf(input) as Partial<Row> & { firstName: string };
  const id = newId('cus');
  const searchText = searchTextOfRow({ lastName: null, email: null, phone: null, ...values });
  const phone = await parsedPhone(ctx, values.phone);
  const [row] = await ctx.tx
    .insert(customers)
    .values({ ...values, id, organizationId: ctx.organizationId, searchText, ...phone })
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

/*
 * The list is the hottest read, so its statement is written out rather than
 * built by the query builder: building the builder's column-by-column SQL cost
 * about 15 % of a request (profiled, bench/parts/customers.ts). The column list
 * is one constant; only the filters are assembled per request.
 */
const LIST_COLUMNS = sql.raw(
  [
    'id',
    'organization_id AS "organizationId"',
    'first_name AS "firstName"',
    'last_name AS "lastName"',
    'company',
    'customer_type AS "customerType"',
    'email',
    'additional_emails AS "additionalEmails"',
    'phone',
    'secondary_phone AS "secondaryPhone"',
    'billing_address AS "billingAddress"',
    'billing_city AS "billingCity"',
    'billing_state AS "billingState"',
    'billing_zip AS "billingZip"',
    'notes',
    'tags',
    'tax_exempt AS "taxExempt"',
    'status',
    'search_text AS "searchText"',
    'deleted_at AS "deletedAt"',
    'anonymized_at AS "anonymizedAt"',
    'phone_e164 AS "phoneE164"',
    'sms_consent AS "smsConsent"',
    'sms_consent_source AS "smsConsentSource"',
    'sms_consent_at AS "smsConsentAt"',
    'created_at AS "createdAt"',
    'updated_at AS "updatedAt"',
  ]
    .map((c) => `c.${c}`)
    .join(', '),
);

/** Live customers of this organization matching the filter, on the customers row aliased `alias`. */
function customerListWhere(ctx: Ctx, filter: CustomerFilter, alias: 'c' | 'n'): SQL {
  const a = sql.raw(alias);
  const parts: SQL[] = [sql`${a}.organization_id = ${ctx.organizationId}`, sql`${a}.deleted_at IS NULL`];
  if (filter.status) parts.push(sql`${a}.status = ${filter.status}`);
  // Tag and search conditions go through customer_search's tenant-bound functions (drizzle/0003_*),
  // which run as its owner so the trigram and GIN indexes stay usable (RLS would forbid them).
  if (filter.tag !== undefined) {
    parts.push(sql`${a}.id IN (SELECT customer_search_tagged(${filter.tag}))`);
  }
  const patterns = searchPatterns(filter.search ?? '');
  if (patterns.length > 0) {
    const list = sql.join(
      patterns.map((p) => sql`${p}`),
      sql`, `,
    );
    parts.push(sql`${a}.id IN (SELECT customer_search_matching(ARRAY[${list}]::text[]))`);
  }
  return sql.join(parts, sql` AND `);
}

/**
 * One page of live customers, newest first (the partial organization/createdAt/id
 * index, walked backwards), with the number matching as an uncorrelated
 * sub-select computed once, which saves a round trip. Exposed so a test can EXPLAIN it.
 */
export function customerListQuery(ctx: Ctx, filter: CustomerFilter, page: Page): SQL {
  // The cursor row is read in the statement itself so its timestamp keeps microseconds.
  const after =
    page.startingAfter === undefined
      ? sql``
      : sql`AND (c.created_at, c.id) < (SELECT created_at, id FROM customers
          WHERE id = ${page.startingAfter} AND organization_id = ${ctx.organizationId})`;
  return sql`SELECT ${LIST_COLUMNS}
    FROM customers c
    WHERE ${customerListWhere(ctx, filter, 'c')} ${after}
    ORDER BY c.created_at DESC, c.id DESC
    LIMIT ${page.limit + 1} OFFSET ${page.offset}`;
}

/** Drivers hand timestamps over as text (node-postgres under Drizzle) or as Date (PGlite). */
const toDate = (v: unknown) => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v)));

/**
 * A fetched row as a Row, its timestamps converted in place: the row object is the caller's own
 * (just read), and a copy of its 27 fields per row was about half the cost of mapping a page.
 */
function rowOf(raw: Record<string, unknown>): Row {
  raw.deletedAt = toDate(raw.deletedAt);
  raw.anonymizedAt = toDate(raw.anonymizedAt);
  raw.smsConsentAt = toDate(raw.smsConsentAt);
  raw.createdAt = toDate(raw.createdAt);
  raw.updatedAt = toDate(raw.updatedAt);
  return raw as unknown as Row;
}

export async function listCustomers(ctx: Ctx, filter: CustomerFilter, page: Page) {
  const fetched = rowsOf<Record<string, unknown>>(await ctx.tx.execute(customerListQuery(ctx, filter, page)));
  const { rows, hasMore } = await pageOfRows(fetched, page, () =>
    rowExists(ctx.tx, customers, ctx.organizationId, page.startingAfter as string),
  );
  let total: number | undefined;
  if (page.includeTotal) {
    const counted = rowsOf<{ n: number }>(
      await ctx.tx.execute(
        sql`SELECT count(*)::int AS n FROM customers c WHERE ${customerListWhere(ctx, filter, 'c')}`,
      ),
    );
    total = Number(counted[0]?.n ?? 0);
  }
  return { rows: rows.map((r) => customerView(rowOf(r))), hasMore, total };
}

export async function getCustomer(ctx: Ctx, id: string): Promise<CustomerView> {
  return customerView(await liveCustomer.find(ctx, id));
}

export async function updateCustomer(ctx: Ctx, id: string, input: UpdateCustomerInput): Promise<CustomerView> {
  const current = await lockLive(ctx, id);
  const changes = columnsOf(input);
  const merged = { ...current, ...changes };
  const searchText = searchTextOfRow(merged);
  if (changes.phone !== undefined) Object.assign(changes, await parsedPhone(ctx, changes.phone));
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

/**
 * Adds one tag to a live customer (used by workflow actions). A tag already present
 * changes nothing and emits nothing (`changed: false`); otherwise customer.updated.
 */
export async function addCustomerTag(
  ctx: Ctx,
  id: string,
  tag: string,
): Promise<{ changed: boolean; customer: CustomerView }> {
  const current = await lockLive(ctx, id);
  const clean = tag.trim();
  if (current.tags.includes(clean)) return { changed: false, customer: customerView(current) };
  const [row] = await ctx.tx
    .update(customers)
    .set({ tags: [...current.tags, clean], updatedAt: new Date() })
    .where(live(ctx, id))
    .returning();
  const updated = row as Row;
  await writeSearchText(ctx, updated, updated.searchText ?? searchTextOfRow(updated));
  const view = customerView(updated);
  await emit(ctx, 'customer.updated', { customerId: id, customer: view });
  return { changed: true, customer: view };
}

/** Soft delete (spec 2.1): a tombstone; properties, invoices and the rest stay attached. */
export async function softDeleteCustomer(ctx: Ctx, id: string): Promise<void> {
  await lockLive(ctx, id);
  const now = new Date();
  await ctx.tx.update(customers).set({ deletedAt: now, updatedAt: now }).where(live(ctx, id));
  await emit(ctx, 'customer.deleted', { customerId: id });
}

export async function changeCustomerStatus(ctx: Ctx, id: string, action: CustomerAction): Promise<CustomerView> {
  const current = await lockLive(ctx, id);
  const to = next(customerMachine, current.status as CustomerStatus, action);
  if (to === undefined) {
    const needs = statesAccepting(customerMachine, action).join(' or ');
    throw invalidState(`Customer is ${current.status}; ${action} needs ${withArticle(`${needs} customer`)}`);
  }
  const [row] = await ctx.tx
    .update(customers)
    .set({ status: to, updatedAt: new Date() })
    .where(live(ctx, id))
    .returning();
  const view = customerView(row as Row);
  await emit(ctx, 'customer.updated', { customerId: id, customer: view });
  return view;
}

/** Any customer of this organization, soft-deleted ones included (erasure must reach tombstones too). */
const lockAny = (ctx: Ctx, id: string): Promise<Row> => anyCustomer.find(ctx, id, true);

export const ANONYMIZED_NAME = 'Anonymized';

/**
 * Erasure (decisions §4), the customer's part (src/flows/anonymize-customer.ts does its
 * properties next): every personal field of the customer is replaced or cleared; ids,
 * amounts and documents stay, so invoices and payments keep adding up. Irreversible:
 * nothing is copied anywhere first. Returns the view and the moment, which the
 * properties take as their updatedAt.
 */
export async function anonymizeCustomer(ctx: Ctx, id: string): Promise<{ customer: CustomerView; at: Date }> {
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
    phoneE164: null,
    phoneCountry: null,
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
    .where(anyCustomer.mine(ctx, id))
    .returning();
  const updated = row as Row;
  await writeSearchText(ctx, updated, searchText);
  // The consent history stays (proof of what was agreed), without the number (customers.consent.ts).
  await ctx.tx
    .update(customerSmsConsents)
    .set({ phoneE164: null })
    .where(and(eq(customerSmsConsents.organizationId, ctx.organizationId), eq(customerSmsConsents.customerId, id)));
  const view = customerView(updated);
  await emit(ctx, 'customer.updated', { customerId: id, customer: view });
  return { customer: view, at: now };
}

/**
 * Genuine deletion: the row goes, and with it every row that references it
 * (each such table declares ON DELETE CASCADE on its customer_id), in this one
 * transaction. Soft-deleted customers can be hard-deleted too.
 */
export async function hardDeleteCustomer(ctx: Ctx, id: string): Promise<void> {
  await lockAny(ctx, id);
  await ctx.tx.delete(customers).where(anyCustomer.mine(ctx, id));
  await emit(ctx, 'customer.deleted', { customerId: id });
}
