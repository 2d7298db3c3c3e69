import { Decimal } from 'decimal.js';
import { invalidField } from './errors.js';

/*
 * Money is integer cents everywhere inside the service (decisions §3); JSON carries
 * numbers with at most two decimals. decimal.js does the exact decimal arithmetic,
 * so 0.1 + 0.2 style binary artefacts never reach a total. ROUND_HALF_UP in
 * decimal.js rounds half away from zero, which is the rule for line amounts and tax.
 */
const D = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP });

/** A document (invoice, estimate, purchase order, bill) may total at most 1,000,000,000.00: far above any real job, far below bigint/float limits. */
export const MAX_TOTAL_CENTS = 100_000_000_000;

/** A JSON money amount → integer cents; more than two decimals is a 400 naming `field`. */
export function toCents(value: number, field: string): number {
  const d = new D(value);
  if (!d.isFinite() || d.decimalPlaces() > 2) throw invalidField(field, 'must have at most two decimals');
  return d.times(100).toNumber();
}

/**
 * An amount of the API (currency units, two decimals) as people read it in the organization's
 * currency ($1,234.50): the portal's pages, texts and owner mails write money the same way.
 */
export function formatMoney(amount: number, currency: string): string {
  return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(Math.round(amount * 100) / 100);
}

/** Integer cents → JSON number (two decimals at most). */
export function fromCents(cents: number): number {
  return new D(cents).dividedBy(100).toNumber();
}

/** A quantity (> 0, at most three decimals), checked exactly. */
export function checkQuantity(value: number, field: string): void {
  const d = new D(value);
  if (!d.isFinite() || d.lte(0)) throw invalidField(field, 'must be greater than 0');
  if (d.decimalPlaces() > 3) throw invalidField(field, 'must have at most three decimals');
}

/** A line's amount: round(quantity × unitPrice) to the cent, half away from zero. */
export function lineAmountCents(quantity: number, unitPriceCents: number): number {
  return new D(quantity).times(unitPriceCents).toDecimalPlaces(0, Decimal.ROUND_HALF_UP).toNumber();
}

/** Document-level tax: round(taxable subtotal × rate / 100), half away from zero. `ratePercent` e.g. 8.25. */
export function taxCents(taxableSubtotalCents: number, ratePercent: number): number {
  return new D(taxableSubtotalCents)
    .times(ratePercent)
    .dividedBy(100)
    .toDecimalPlaces(0, Decimal.ROUND_HALF_UP)
    .toNumber();
}

export interface PricedLine {
  quantity: number;
  unitPriceCents: number;
  taxable: boolean;
}

export interface Totals {
  lineAmountsCents: number[];
  subtotalCents: number;
  taxCents: number;
  totalCents: number;
}

/** Totals of a document: subtotal = Σ line amounts; tax on the taxable part; total = subtotal + tax. */
export function computeTotals(lines: PricedLine[], taxRatePercent: number): Totals {
  const amounts = lines.map((l) => lineAmountCents(l.quantity, l.unitPriceCents));
  const subtotal = amounts.reduce((a, b) => a + b, 0);
  const taxable = amounts.reduce((sum, amount, i) => sum + (lines[i]?.taxable ? amount : 0), 0);
  const tax = taxCents(taxable, taxRatePercent);
  return { lineAmountsCents: amounts, subtotalCents: subtotal, taxCents: tax, totalCents: subtotal + tax };
}
