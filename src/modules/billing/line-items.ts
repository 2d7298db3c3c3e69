import { Type } from 'typebox';
import type { StoredJobLine } from '../../db/schema/index.js';
import { invalidField } from '../../platform/errors.js';
import {
  checkQuantity,
  computeTotals,
  fromCents,
  MAX_TOTAL_CENTS,
  type Totals,
  toCents,
} from '../../platform/money.js';
import { Money, Nullable } from '../../platform/schemas.js';
import type { Ctx } from '../../platform/tenancy.js';
import { requireServices } from '../services/services.refs.js';

/*
 * Line items shared by invoices and estimates: the request and response shapes,
 * and pricing (catalog defaults, exact decimal checks, document totals).
 */

export const MAX_LINE_ITEMS = 200;

export const LineItemInput = Type.Object(
  {
    serviceId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'Catalog service; supplies description, unitPrice and taxable when they are omitted',
      }),
    ),
    description: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1000, description: 'Required unless serviceId is given' }),
    ),
    quantity: Type.Number({
      exclusiveMinimum: 0,
      maximum: 1_000_000,
      description: 'Greater than 0, at most three decimals',
    }),
    unitPrice: Type.Optional(Money('Price per unit, ≥ 0, at most two decimals; required unless serviceId is given')),
    taxable: Type.Optional(Type.Boolean({ description: 'Default: the service’s setting, else true' })),
  },
  { additionalProperties: false },
);
export type LineItemInputT = {
  serviceId?: string | undefined;
  description?: string | undefined;
  quantity: number;
  unitPrice?: number | undefined;
  taxable?: boolean | undefined;
};

export const LineItemsInput = Type.Array(LineItemInput, {
  minItems: 1,
  maxItems: MAX_LINE_ITEMS,
  description: 'At least one line',
});

/** What a resource says of a line's fields in its own terms (a job's line, say), where the plain shape says nothing. */
export interface LineNotes {
  serviceId?: string;
  unitPrice?: string;
  taxable?: string;
  amount?: string;
}

const described = (text: string | undefined) => (text === undefined ? {} : { description: text });

/** The one shape of a priced line in a response, for every resource with lines. */
function lineFields(notes: LineNotes = {}) {
  return {
    serviceId: Nullable(Type.String(described(notes.serviceId))),
    description: Type.String(),
    quantity: Type.Number(),
    unitPrice: Type.Number(described(notes.unitPrice)),
    taxable: Type.Boolean(described(notes.taxable)),
    amount: Type.Number({ description: notes.amount ?? 'round(quantity × unitPrice), half away from zero' }),
  };
}

/** A stored document line (invoices, estimates): the line with its id. */
export const LineItem = Type.Object({ id: Type.String(), ...lineFields() }, { additionalProperties: false });

/** A line kept inside its owner's row, with no id of its own (a job's, a schedule's). */
export const UnnumberedLineItem = (notes?: LineNotes) =>
  Type.Object(lineFields(notes), { additionalProperties: false });

/** A line ready to store: prices in cents, amount computed. */
export interface PricedLine {
  serviceId: string | null;
  description: string;
  quantity: number;
  unitPriceCents: number;
  taxable: boolean;
  amountCents: number;
}

export interface PricedDocument {
  lines: PricedLine[];
  totals: Totals;
  taxRate: number;
}

/**
 * Validates and prices request lines. Everything that can be refused is refused
 * here, before the caller writes anything.
 */
export async function priceLines(ctx: Ctx, items: LineItemInputT[], taxRate: number): Promise<PricedDocument> {
  const serviceIds = items.flatMap((i) => (i.serviceId ? [i.serviceId] : []));
  const catalog = await requireServices(ctx, serviceIds);
  const partial = items.map((item, i) => {
    const field = `lineItems.${i}`;
    const service = item.serviceId ? catalog.get(item.serviceId) : undefined;
    if (item.serviceId && !service) throw invalidField(`${field}.serviceId`, `no service ${item.serviceId}`);
    checkQuantity(item.quantity, `${field}.quantity`);
    const description = item.description ?? service?.name;
    if (description === undefined) throw invalidField(`${field}.description`, 'is required unless serviceId is given');
    let unitPriceCents: number;
    if (item.unitPrice !== undefined) unitPriceCents = toCents(item.unitPrice, `${field}.unitPrice`);
    else if (service) unitPriceCents = service.unitPriceCents;
    else throw invalidField(`${field}.unitPrice`, 'is required unless serviceId is given');
    return {
      serviceId: item.serviceId ?? null,
      description,
      quantity: item.quantity,
      unitPriceCents,
      taxable: item.taxable ?? service?.taxable ?? true,
    };
  });
  return finish(partial, taxRate);
}

/** Totals for lines whose prices are already known (conversion of an estimate). */
export function finish(lines: Omit<PricedLine, 'amountCents'>[], taxRate: number): PricedDocument {
  const totals = computeTotals(lines, taxRate);
  if (totals.totalCents > MAX_TOTAL_CENTS) throw invalidField('lineItems', 'the document total exceeds 1,000,000,000');
  return {
    lines: lines.map((l, i) => ({ ...l, amountCents: totals.lineAmountsCents[i] as number })),
    totals,
    taxRate,
  };
}

/** The rate a customer pays: the organization's, unless the customer is tax exempt. */
export const taxRateFor = (customer: { taxExempt: boolean }, orgTaxRate: number) =>
  customer.taxExempt ? 0 : orgTaxRate;

/** A stored document line: a job's line (db/schema) with the id an invoice or estimate line has. */
type StoredLine = StoredJobLine & { id: string };

/** A stored line's money and quantity in JSON form (jobs keep lines without ids). */
export const lineValues = (l: Omit<StoredLine, 'id'>) => ({
  serviceId: l.serviceId,
  description: l.description,
  quantity: Number(l.quantity),
  unitPrice: fromCents(l.unitPriceCents),
  taxable: l.taxable,
  amount: fromCents(l.amountCents),
});

export const lineView = (l: StoredLine) => ({ id: l.id, ...lineValues(l) });

/** Stored lines back to priceable lines (estimate → invoice or job, job → invoice keep every price as it was). */
export const storedToPriced = (l: Omit<StoredLine, 'id'>): Omit<PricedLine, 'amountCents'> => ({
  serviceId: l.serviceId,
  description: l.description,
  quantity: Number(l.quantity),
  unitPriceCents: l.unitPriceCents,
  taxable: l.taxable,
});

/** Line rows for insertion (ids and owner filled by the caller's table helper). */
export const lineRows = (lines: PricedLine[]) =>
  lines.map((l, position) => ({
    position,
    serviceId: l.serviceId,
    description: l.description,
    quantity: String(l.quantity),
    unitPriceCents: l.unitPriceCents,
    taxable: l.taxable,
    amountCents: l.amountCents,
  }));

/** The stored totals columns of a priced document (invoices and estimates share them). */
export const totalsColumns = (priced: PricedDocument) => ({
  taxRate: String(priced.taxRate),
  subtotalCents: priced.totals.subtotalCents,
  taxCents: priced.totals.taxCents,
  totalCents: priced.totals.totalCents,
});
