import { type Static, Type } from 'typebox';
import { EnumList } from '../../platform/enum.js';
import { Nullable } from '../../platform/schemas.js';
import type { Ctx } from '../../platform/tenancy.js';
import { addressLine, customerName, customersByIds } from '../customers/customers.refs.js';
import { propertiesByIds } from './properties.refs.js';

/*
 * `expand=customer,property` (Stripe's `expand[]=customer` works too) on jobs, invoices and
 * estimates: each record carries its customer's name and contact and its property's address,
 * so "who and where" takes one call instead of one per record. Two queries per page, whatever
 * its size.
 */

export const EXPANDABLE = ['customer', 'property'] as const;
export type Expandable = (typeof EXPANDABLE)[number];

/** The query parameters that ask for expansions (both spellings). */
export const ExpandQuery = {
  expand: Type.Optional(EnumList(EXPANDABLE, 'Related records to include in each item')),
  'expand[]': Type.Optional(
    Type.Array(Type.Union(EXPANDABLE.map((e) => Type.Literal(e))), {
      maxItems: 2,
      description: 'Stripe-style spelling of expand: expand[]=customer&expand[]=property',
    }),
  ),
};

export const CustomerSummary = Type.Object(
  {
    id: Type.String(),
    name: Type.String({ description: 'firstName + lastName' }),
    company: Nullable(Type.String()),
    email: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    address: Type.String({ description: 'Billing address on one line ("" when none)' }),
  },
  { additionalProperties: false, description: 'Only with expand=customer' },
);

export const PropertySummary = Type.Object(
  {
    id: Type.String(),
    name: Nullable(Type.String()),
    address: Type.String({ description: 'Street, city, state and zip on one line' }),
    lat: Nullable(Type.Number()),
    lng: Nullable(Type.Number()),
  },
  { additionalProperties: false, description: 'Only with expand=property; null when the record names no property' },
);

/** The fields an expandable record may carry (spread into its response schema). */
export const ExpandedFields = {
  customer: Type.Optional(CustomerSummary),
  property: Type.Optional(Nullable(PropertySummary)),
};

export type Expanded = {
  customer?: Static<typeof CustomerSummary>;
  property?: Static<typeof PropertySummary> | null;
};

/** What a request asks to expand, from `expand=a,b` and/or `expand[]=a&expand[]=b`. */
export function expansionsOf(q: { expand?: string | undefined; 'expand[]'?: string[] | undefined }): Set<Expandable> {
  const asked = [...(q.expand ? q.expand.split(',') : []), ...(q['expand[]'] ?? [])];
  return new Set(asked.filter((e): e is Expandable => (EXPANDABLE as readonly string[]).includes(e)));
}

/** `rows` with their customer and/or property, as asked (unchanged when nothing is). */
export async function expandParties<T extends { customerId: string; propertyId: string | null }>(
  ctx: Ctx,
  rows: T[],
  want: Set<Expandable>,
): Promise<Array<T & Expanded>> {
  if (want.size === 0 || rows.length === 0) return rows;
  const customerIds = [...new Set(rows.map((r) => r.customerId))];
  const propertyIds = [...new Set(rows.map((r) => r.propertyId).filter((id): id is string => id !== null))];
  const people = want.has('customer') ? [...(await customersByIds(ctx, customerIds)).values()] : [];
  const places = want.has('property') ? await propertiesByIds(ctx, propertyIds) : [];
  const byCustomer = new Map(
    people.map((c) => [
      c.id,
      {
        id: c.id,
        name: customerName(c),
        company: c.company,
        email: c.email,
        phone: c.phone,
        address: addressLine(c.billingAddress, c.billingCity, c.billingState, c.billingZip),
      },
    ]),
  );
  const byProperty = new Map(
    places.map((p) => [
      p.id,
      {
        id: p.id,
        name: p.name,
        address: addressLine(p.street, p.city, p.state, p.zip),
        lat: p.lat,
        lng: p.lng,
      },
    ]),
  );
  return rows.map((r) => ({
    ...r,
    ...(want.has('customer') && byCustomer.has(r.customerId) ? { customer: byCustomer.get(r.customerId) } : {}),
    ...(want.has('property') ? { property: r.propertyId ? (byProperty.get(r.propertyId) ?? null) : null } : {}),
  }));
}
