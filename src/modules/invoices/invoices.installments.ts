// Per-function entry points, not the package root (all of date-fns at start): src/platform/dates.ts.
import { addMonths } from 'date-fns/addMonths';
import { format } from 'date-fns/format';
import { and, eq } from 'drizzle-orm';
import { invoiceBillingKeys } from '../../db/schema/index.js';
import { addDays, isDateOnly } from '../../platform/dates.js';
import { invalidField } from '../../platform/errors.js';
import type { Ctx } from '../../platform/tenancy.js';
import { finish, taxRateFor } from '../billing/line-items.js';
import { requireCustomer } from '../customers/customers.refs.js';
import { getOrgSettings } from '../settings/settings.service.js';
import { claimBillingKeys, recordBillingKeys } from './invoices.billing-keys.js';
import { getInvoice, type InvoiceDetailView, insertInvoice, type SendDeps, sendInvoice } from './invoices.service.js';

/*
 * A schedule's `installments` billing (operations.md §9): fixed invoices on fixed dates
 * whatever the visits. The plan is a pure function (cents split exactly, remainder on
 * the last); each installment invoice is made once per key, claimed in
 * invoice_billing_keys before it is numbered, so two workers (two processes) racing
 * for the same installment make one invoice and leave no gap in the numbering.
 */

export interface Installment {
  /** 1-based. */
  number: number;
  /** The invoice date, YYYY-MM-DD: firstDate plus (number − 1) months, clamped to the month's end. */
  date: string;
  amountCents: number;
}

const MAX_INSTALLMENTS = 120;

/**
 * The installments of `totalCents` in `count` monthly parts from `firstDate`. Without
 * `amountsCents`, equal cents with the remainder on the last ($1,000 in three: 333.33,
 * 333.33, 333.34); with them, one per installment adding up to the total, else 400
 * naming `billing.amounts`.
 */
export function installmentPlan(
  totalCents: number,
  count: number,
  firstDate: string,
  amountsCents?: number[],
): Installment[] {
  if (!Number.isInteger(count) || count < 1 || count > MAX_INSTALLMENTS) {
    throw invalidField('billing.count', `must be a whole number from 1 to ${MAX_INSTALLMENTS}`);
  }
  if (!isDateOnly(firstDate)) throw invalidField('billing.firstDate', 'must be a date (YYYY-MM-DD)');
  if (!Number.isSafeInteger(totalCents) || totalCents < 0) {
    throw invalidField('billing.total', 'must be a non-negative amount in cents');
  }
  let amounts: number[];
  if (amountsCents) {
    if (amountsCents.length !== count) {
      throw invalidField(
        'billing.amounts',
        `must give ${count} amounts, one per installment (got ${amountsCents.length})`,
      );
    }
    if (amountsCents.some((a) => !Number.isSafeInteger(a) || a < 0)) {
      throw invalidField('billing.amounts', 'must be non-negative amounts in cents');
    }
    const sum = amountsCents.reduce((a, b) => a + b, 0);
    if (sum !== totalCents) {
      throw invalidField(
        'billing.amounts',
        `add up to ${(sum / 100).toFixed(2)}, not the total ${(totalCents / 100).toFixed(2)}`,
      );
    }
    amounts = amountsCents;
  } else {
    const each = Math.floor(totalCents / count);
    amounts = Array.from({ length: count }, (_, i) => (i === count - 1 ? totalCents - each * (count - 1) : each));
  }
  const [y, m, d] = firstDate.split('-').map(Number) as [number, number, number];
  const first = new Date(y, m - 1, d);
  return amounts.map((amountCents, i) => ({
    number: i + 1,
    date: format(addMonths(first, i), 'yyyy-MM-dd'),
    amountCents,
  }));
}

export interface InstallmentBill {
  /** Unique per organization and installment, e.g. `schedule:<id>:installment:3`. */
  key: string;
  customerId: string;
  propertyId?: string | null | undefined;
  /** What the season is, e.g. `Lawn care 2026`: the line reads `Installment 3 of 6 — Lawn care 2026`. */
  description: string;
  installment: Installment;
  count: number;
  /**
   * Whether the line is taxed at the customer's rate. Default false: an installment is
   * an agreed amount (the contract's totalValue split), so its invoice totals exactly it.
   */
  taxable?: boolean | undefined;
  send?: boolean | undefined;
}

/**
 * Makes one installment's invoice, once: the key is claimed first (INSERT … ON CONFLICT
 * DO NOTHING waits for a concurrent claimer to commit or roll back); a key already
 * claimed answers `{created: false}` with the invoice it made (null if that draft was
 * deleted since: a deleted installment is not made again).
 */
export async function billInstallment(
  ctx: Ctx,
  bill: InstallmentBill,
  deps: SendDeps,
): Promise<{ created: boolean; invoice: InvoiceDetailView | null }> {
  if (!(await claimBillingKeys(ctx, [bill.key])).has(bill.key)) {
    const byKey = and(eq(invoiceBillingKeys.organizationId, ctx.organizationId), eq(invoiceBillingKeys.key, bill.key));
    const [made] = await ctx.tx.select().from(invoiceBillingKeys).where(byKey);
    return { created: false, invoice: made?.invoiceId ? await getInvoice(ctx, made.invoiceId) : null };
  }
  const settings = await getOrgSettings(ctx);
  const customer = await requireCustomer(ctx, bill.customerId);
  const { installment } = bill;
  const priced = finish(
    [
      {
        serviceId: null,
        description: `Installment ${installment.number} of ${bill.count} — ${bill.description}`,
        quantity: 1,
        unitPriceCents: installment.amountCents,
        taxable: bill.taxable ?? false,
      },
    ],
    taxRateFor(customer, settings.taxRate),
  );
  let invoice = await insertInvoice(ctx, {
    customerId: customer.id,
    propertyId: bill.propertyId ?? null,
    invoiceDate: installment.date,
    dueDate: addDays(installment.date, settings.paymentTermsDays),
    notes: null,
    estimateId: null,
    priced,
  });
  await recordBillingKeys(ctx, [{ key: bill.key, invoiceId: invoice.id }]);
  if (bill.send) {
    await sendInvoice(ctx, invoice.id, deps);
    invoice = await getInvoice(ctx, invoice.id);
  }
  return { created: true, invoice };
}

/**
 * The worker's step for one installment plan: every installment dated today or
 * earlier that has not been made yet (keys `<keyPrefix>:installment:<n>`). Safe to run
 * any number of times, on any number of processes.
 */
export async function billDueInstallments(
  ctx: Ctx,
  plan: Installment[],
  todayDate: string,
  bill: Omit<InstallmentBill, 'key' | 'installment' | 'count'> & { keyPrefix: string },
  deps: SendDeps,
): Promise<InvoiceDetailView[]> {
  const { keyPrefix, ...rest } = bill;
  const made: InvoiceDetailView[] = [];
  for (const installment of plan) {
    if (installment.date > todayDate) break;
    const key = `${keyPrefix}:installment:${installment.number}`;
    const { created, invoice } = await billInstallment(ctx, { ...rest, key, installment, count: plan.length }, deps);
    if (created && invoice) made.push(invoice);
  }
  return made;
}
