import { sql } from 'drizzle-orm';
import {
  boolean,
  doublePrecision,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';
import { createdAt, organizationId, updatedAt } from './columns.js';

export const customers = pgTable(
  'customers',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    firstName: text('first_name').notNull(),
    lastName: text('last_name'),
    company: text('company'),
    customerType: text('customer_type').notNull().default('INDIVIDUAL'),
    email: text('email'),
    additionalEmails: jsonb('additional_emails').$type<string[]>().notNull().default([]),
    phone: text('phone'),
    secondaryPhone: text('secondary_phone'),
    billingAddress: text('billing_address'),
    billingCity: text('billing_city'),
    billingState: text('billing_state'),
    billingZip: text('billing_zip'),
    notes: text('notes'),
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
    taxExempt: boolean('tax_exempt').notNull().default(false),
    /** active | inactive (deactivate/reactivate). */
    status: text('status').notNull().default('active'),
    /** Lower-cased name + email + phone digits, kept by the service (see customerSearch for the index). */
    searchText: text('search_text').notNull().default(''),
    deletedAt: timestamp('deleted_at', { withTimezone: true, mode: 'date' }),
    anonymizedAt: timestamp('anonymized_at', { withTimezone: true, mode: 'date' }),
    /** `phone` parsed with the organization's country (platform/phones.ts); null when not a valid number. */
    phoneE164: text('phone_e164'),
    /**
     * The country `phoneE164` was read with; null with a phone: to be read again (drizzle/0045, a
     * country change), by the worker task `customers.phones` (customers.phones.ts).
     */
    phoneCountry: text('phone_country'),
    /** The latest of customer_sms_consents: unknown | opted_in | opted_out. */
    smsConsent: text('sms_consent').notNull().default('unknown'),
    smsConsentSource: text('sms_consent_source'),
    smsConsentAt: timestamp('sms_consent_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'customers_pkey', columns: [t.organizationId, t.id] }),
    index('customers_org_phone_e164_idx').on(t.organizationId, t.phoneE164).where(sql`${t.phoneE164} IS NOT NULL`),
    index('customers_phone_unread_idx')
      .on(t.organizationId, t.id)
      .where(sql`${t.phone} IS NOT NULL AND ${t.phoneCountry} IS NULL`),
    // Lists and their counts only ever read live customers: a partial index keeps both index-only at scale.
    // Ascending on purpose: Drizzle's .desc() emits DESC NULLS LAST, which cannot serve `ORDER BY … DESC`
    // (NULLS FIRST); a backward scan of an ascending index can.
    index('customers_org_live_created_idx').on(t.organizationId, t.createdAt, t.id).where(sql`${t.deletedAt} IS NULL`),
    index('customers_org_live_status_created_idx')
      .on(t.organizationId, t.status, t.createdAt, t.id)
      .where(sql`${t.deletedAt} IS NULL`),
  ],
);

/**
 * The indexes for customer `search` and `tag`, kept beside `customers` on purpose.
 * Under FORCE ROW LEVEL SECURITY PostgreSQL only uses an index for a condition
 * whose operator is LEAKPROOF; LIKE, the pg_trgm operators and array containment
 * are not, so a trigram or GIN index on `customers` itself is never used by the application role
 * (measured: a sequential scan of the tenant's rows instead). This table's RLS is
 * enabled but not forced: it maps search text to customer ids, keyed by (organization,
 * customer), read through tenant-bound functions, and every query joins back to
 * `customers`, where RLS applies. Rows are written by the customers service and vanish
 * with their customer (cascade).
 */
export const customerSearch = pgTable(
  'customer_search',
  {
    customerId: text('customer_id').notNull(),
    /** RLS (not forced) for the application role; reads go through tenant-bound functions, see migrate.ts. */
    organizationId: organizationId(),
    /** The customer's own text, its billing address, then `propertyText` (customers.search.ts). */
    searchText: text('search_text').notNull(),
    /** Its properties' addresses, written by the properties module (customers.refs.ts setPropertySearchText). */
    propertyText: text('property_text').notNull().default(''),
    /** Copy of customers.tags, for the `tag` filter (array containment is not LEAKPROOF either). */
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
  },
  (t) => [
    primaryKey({ name: 'customer_search_pkey', columns: [t.organizationId, t.customerId] }),
    foreignKey({
      name: 'customer_search_customer_id_fk',
      columns: [t.organizationId, t.customerId],
      foreignColumns: [customers.organizationId, customers.id],
    }).onDelete('cascade'),
    index('customer_search_trgm_idx').using('gin', sql`${t.searchText} gin_trgm_ops`),
    index('customer_search_tags_idx').using('gin', t.tags),
  ],
);

export const properties = pgTable(
  'properties',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    customerId: text('customer_id').notNull(),
    name: text('name'),
    street: text('street').notNull(),
    city: text('city'),
    state: text('state'),
    zip: text('zip'),
    accessNotes: text('access_notes'),
    gateCode: text('gate_code'),
    /** Lot size in square feet. */
    lotSize: integer('lot_size'),
    lat: doublePrecision('lat'),
    lng: doublePrecision('lng'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'properties_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'properties_customer_id_fk',
      columns: [t.organizationId, t.customerId],
      foreignColumns: [customers.organizationId, customers.id],
    }).onDelete('cascade'),
    index('properties_org_customer_idx').on(t.organizationId, t.customerId, t.createdAt, t.id),
    index('properties_org_created_idx').on(t.organizationId, t.createdAt, t.id),
  ],
);

/** The services catalog: what the business sells, with default prices for line items. */
export const services = pgTable(
  'services',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    name: text('name').notNull(),
    description: text('description'),
    unit: text('unit').notNull().default('each'),
    unitPriceCents: integer('unit_price_cents').notNull(),
    taxable: boolean('taxable').notNull().default(true),
    active: boolean('active').notNull().default(true),
    /** Offered on the public booking form (operations.md §12). */
    bookable: boolean('bookable').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'services_pkey', columns: [t.organizationId, t.id] }),
    index('services_org_created_idx').on(t.organizationId, t.createdAt, t.id),
  ],
);

/**
 * Every change of a customer's SMS consent (operations.md §10), oldest first: who recorded it
 * (`source`: staff | portal | keyword | request_form) and on what `evidence`. Kept for the life
 * of the customer; anonymizing clears `phone_e164` and keeps the row.
 */
export const customerSmsConsents = pgTable(
  'customer_sms_consents',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    customerId: text('customer_id').notNull(),
    /** opted_in | opted_out */
    status: text('status').notNull(),
    source: text('source').notNull(),
    evidence: text('evidence'),
    phoneE164: text('phone_e164'),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ name: 'customer_sms_consents_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'customer_sms_consents_customer_id_fk',
      columns: [t.organizationId, t.customerId],
      foreignColumns: [customers.organizationId, customers.id],
    }).onDelete('cascade'),
    index('customer_sms_consents_customer_idx').on(t.organizationId, t.customerId, t.createdAt, t.id),
  ],
);
