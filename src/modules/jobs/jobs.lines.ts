import { Type } from 'typebox';
import type { StoredJobLine } from '../../db/schema/index.js';
import type { Ctx } from '../../platform/tenancy.js';
import {
  finish,
  LineItemInput,
  type LineItemInputT,
  lineRows,
  lineValues,
  MAX_LINE_ITEMS,
  type PricedDocument,
  priceLines,
  storedToPriced,
  UnnumberedLineItem,
} from '../billing/line-items.js';

/*
 * A job's priced lines (operations.md §9). They are priced by the invoices' own line
 * code (billing/line-items.ts: catalog defaults, exact decimals, half-away-from-zero
 * amounts, the document ceiling), at a tax rate of 0: a job's total is Σ amounts, and
 * tax is the invoice's business when the job is billed.
 */

export const JobLineItemsInput = Type.Array(LineItemInput, {
  maxItems: MAX_LINE_ITEMS,
  description:
    'Priced lines, as invoice lines: a serviceId line takes its description, unitPrice and taxable from the catalog when omitted; [] removes every line',
});

export const JobLineItem = UnnumberedLineItem({
  serviceId: 'Catalog service (GET /api/services), if the line came from one',
  unitPrice: 'Price per unit',
  taxable: 'Whether the invoice made from this job taxes the line',
  amount: 'round(quantity × unitPrice), half away from zero, exactly as on invoices',
});

export interface PricedJobLines {
  lineItems: StoredJobLine[];
  totalCents: number;
}

/** The stored form of priced lines (no tax: the job total is the subtotal). */
function stored(priced: PricedDocument): PricedJobLines {
  return {
    lineItems: lineRows(priced.lines).map(({ position: _position, ...line }) => line),
    totalCents: priced.totals.subtotalCents,
  };
}

/** Request lines → stored lines; every refusal (foreign service, decimals) is a 400 before any write. */
export async function priceJobLines(ctx: Ctx, items: LineItemInputT[]): Promise<PricedJobLines> {
  return stored(await priceLines(ctx, items, 0));
}

/** Lines whose prices are already settled (an approved estimate's) → stored job lines. */
export const settledJobLines = (lines: Parameters<typeof storedToPriced>[0][]): PricedJobLines =>
  stored(finish(lines.map(storedToPriced), 0));

export const jobLineView = (l: StoredJobLine) => lineValues(l);
