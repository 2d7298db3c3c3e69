import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finish } from '../../src/modules/billing/line-items.js';
import { createCustomer, setSettings } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/*
 * Property-based checks of document arithmetic against an independent reference
 * in BigInt: quantities are whole thousandths, prices whole cents, rates whole
 * thousandths of a percent, so every step is exact integer arithmetic and
 * "half away from zero" on non-negative values is floor(x + ½).
 */

interface RefLine {
  qThousandths: bigint;
  priceCents: bigint;
  taxable: boolean;
}

function reference(lines: RefLine[], rateThousandths: bigint) {
  const amounts = lines.map((l) => (l.qThousandths * l.priceCents + 500n) / 1000n);
  const subtotal = amounts.reduce((a, b) => a + b, 0n);
  const taxable = amounts.reduce((s, a, i) => s + (lines[i]?.taxable ? a : 0n), 0n);
  const tax = (taxable * rateThousandths + 50_000n) / 100_000n;
  return { amounts: amounts.map(Number), subtotal: Number(subtotal), tax: Number(tax), total: Number(subtotal + tax) };
}

const lineArb = fc.record({
  qThousandths: fc.bigInt({ min: 1n, max: 1_000_000n }),
  priceCents: fc.bigInt({ min: 0n, max: 1_000_000n }),
  taxable: fc.boolean(),
});
const rateArb = fc.bigInt({ min: 0n, max: 100_000n });

const asNumber = (thousandthsOrCents: bigint, scale: number) => Number(thousandthsOrCents) / scale;

describe('document totals', () => {
  it('match the BigInt reference to the cent and add up (pure)', () => {
    fc.assert(
      fc.property(fc.array(lineArb, { minLength: 1, maxLength: 30 }), rateArb, (lines, rate) => {
        const doc = finish(
          lines.map((l) => ({
            serviceId: null,
            description: 'x',
            quantity: asNumber(l.qThousandths, 1000),
            unitPriceCents: Number(l.priceCents),
            taxable: l.taxable,
          })),
          asNumber(rate, 1000),
        );
        const ref = reference(lines, rate);
        expect(doc.lines.map((l) => l.amountCents)).toEqual(ref.amounts);
        expect(doc.totals.subtotalCents).toBe(ref.subtotal);
        expect(doc.totals.taxCents).toBe(ref.tax);
        expect(doc.totals.totalCents).toBe(ref.total);
        expect(doc.totals.subtotalCents + doc.totals.taxCents).toBe(doc.totals.totalCents);
      }),
      { numRuns: 1000 },
    );
  });

  it('knows the classic half-cent cases', () => {
    const one = (quantity: number, unitPriceCents: number, rate = 0) =>
      finish([{ serviceId: null, description: 'x', quantity, unitPriceCents, taxable: true }], rate).totals;
    expect(one(1.5, 3333).subtotalCents).toBe(5000); // 49.995 → 50.00
    expect(one(0.5, 1).subtotalCents).toBe(1); // 0.005 → 0.01
    expect(one(1, 5000, 8.25).taxCents).toBe(413); // 4.125 → 4.13
    expect(one(3, 10, 0.1).subtotalCents).toBe(30); // 0.1 × 3 without float drift
  });
});

describe('document totals through the API', () => {
  let h: Harness;
  let owner: TestUser;
  let customerId: string;
  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    customerId = (await createCustomer(h, owner)).id;
  });
  afterAll(async () => h?.close());

  it('invoices and estimates over random lines and rates match the reference', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(lineArb, { minLength: 1, maxLength: 8 }), rateArb, async (lines, rate) => {
        await setSettings(h, owner.organizationId, { taxRate: asNumber(rate, 1000) });
        const body = {
          customerId,
          lineItems: lines.map((l, i) => ({
            description: `line ${i}`,
            quantity: asNumber(l.qThousandths, 1000),
            unitPrice: asNumber(l.priceCents, 100),
            taxable: l.taxable,
          })),
        };
        const ref = reference(lines, rate);
        for (const url of ['/api/invoices', '/api/estimates']) {
          const res = await owner.call('POST', url, body);
          expect(res.statusCode, res.body).toBe(201);
          const doc = res.json().data;
          const cents = (n: number) => Math.round(n * 100);
          expect(doc.lineItems.map((l: { amount: number }) => cents(l.amount))).toEqual(ref.amounts);
          expect(cents(doc.subtotal)).toBe(ref.subtotal);
          expect(cents(doc.tax)).toBe(ref.tax);
          expect(cents(doc.total)).toBe(ref.total);
          // The JSON numbers themselves carry at most two decimals.
          for (const n of [doc.subtotal, doc.tax, doc.total]) expect(String(n)).toMatch(/^\d+(\.\d{1,2})?$/);
        }
      }),
      { numRuns: 15 },
    );
  });
});
