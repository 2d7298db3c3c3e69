import { eq, sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/client.js';
import { billPayments, bills, invoices, ledgerLines, paymentRefunds, payments } from '../../src/db/schema/index.js';
import { recordPayment } from '../../src/flows/record-payment.js';
import { refundPayment } from '../../src/flows/refund-payment.js';
import {
  createBillPayment,
  failBillPayment,
  settleBillPayment,
} from '../../src/modules/bill-payments/bill-payments.service.js';
import { approveBill, createBill, getBill, postBill, voidBill } from '../../src/modules/bills/bills.service.js';
import {
  createInvoice,
  getInvoice,
  sendInvoice,
  voidInvoice,
  writeOffInvoice,
} from '../../src/modules/invoices/invoices.service.js';
import { closePeriod, reopenPeriod } from '../../src/modules/ledger/ledger.close.js';
import { trialBalance } from '../../src/modules/ledger/ledger.service.js';
import { createVendor } from '../../src/modules/vendors/vendors.service.js';
import { addDays, today } from '../../src/platform/dates.js';
import { AppError } from '../../src/platform/errors.js';
import { type Ctx, inTenant } from '../../src/platform/tenancy.js';
import { createCustomer, setSettings } from '../factories.js';
import { createHarness, type Harness, newTenant } from '../harness.js';

/*
 * The ledger's invariants over random operation sequences (operations.md §3).
 * Operations run through the services, each in its own tenant transaction as a
 * request would; after every step the books are read straight from the tables.
 * A refused operation (4xx AppError) is part of the game: it must change nothing
 * that breaks an invariant.
 */

const Index = fc.nat({ max: 50 });
const Percent = fc.integer({ min: 1, max: 100 });
/** How many days before today a document is dated, or the books closed through (0: today). */
const DaysAgo = fc.nat({ max: 8 });
const Command = fc.oneof(
  fc.record({
    kind: fc.constant('invoice' as const),
    cents: fc.integer({ min: 1, max: 80_000 }),
    taxed: fc.boolean(),
    daysAgo: DaysAgo,
  }),
  fc.record({ kind: fc.constant('send' as const), i: Index }),
  fc.record({ kind: fc.constant('invoicePay' as const), i: Index, pct: Percent, daysAgo: DaysAgo }),
  fc.record({ kind: fc.constant('refund' as const), i: Index, pct: Percent, whole: fc.boolean() }),
  fc.record({ kind: fc.constant('invoiceVoid' as const), i: Index }),
  fc.record({ kind: fc.constant('writeOff' as const), i: Index }),
  fc.record({
    kind: fc.constant('bill' as const),
    cents: fc.integer({ min: 1, max: 60_000 }),
    draft: fc.boolean(),
    daysAgo: DaysAgo,
  }),
  fc.record({ kind: fc.constant('postBill' as const), i: Index }),
  fc.record({ kind: fc.constant('approve' as const), i: Index }),
  fc.record({ kind: fc.constant('billVoid' as const), i: Index }),
  fc.record({
    kind: fc.constant('billPay' as const),
    picks: fc.array(fc.record({ i: Index, pct: Percent }), { minLength: 1, maxLength: 3 }),
    scheduled: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('settle' as const), i: Index }),
  fc.record({ kind: fc.constant('fail' as const), i: Index }),
  // Period close (operations.md §11): closing through a day before today, or reopening.
  fc.record({ kind: fc.constant('close' as const), daysAgo: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ kind: fc.constant('reopen' as const), daysAgo: fc.option(fc.integer({ min: 2, max: 9 })) }),
);
type Cmd = typeof Command extends fc.Arbitrary<infer T> ? T : never;

// A negative index counts from the end (-1 is the newest), as the fixed tail below uses it.
const pick = <T>(list: T[], i: number): T | undefined =>
  list.length === 0 ? undefined : list[((i % list.length) + list.length) % list.length];
/*
 * Every sequence ends with an invoice that is sent, paid in full and half
 * refunded, so each run refunds at least once whatever the random part drew
 * (a run of 30 random sequences alone once drew no refund that went through).
 */
const RUNS = 30;
const refundTail: Cmd[] = [
  { kind: 'invoice', cents: 12_000, taxed: true, daysAgo: 0 },
  { kind: 'send', i: -1 },
  { kind: 'invoicePay', i: -1, pct: 100, daysAgo: 0 },
  { kind: 'refund', i: -1, pct: 50, whole: false },
];
const share = (balance: number, pct: number) => Math.max(1, Math.floor((balance * pct) / 100)) / 100;

describe('ledger invariants over random sequences', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => h?.close());

  async function checkBooks(organizationId: string) {
    const db = h.admin.db;
    const unbalanced = await db.execute(
      sql`SELECT entry_id FROM ledger_lines WHERE organization_id = ${organizationId} GROUP BY entry_id HAVING sum(debit_cents) <> sum(credit_cents)`,
    );
    expect(rowsOf(unbalanced), 'every entry balances').toEqual([]);
    const sums = await db
      .select({
        code: ledgerLines.accountCode,
        dr: sql<string>`sum(${ledgerLines.debitCents})`,
        cr: sql<string>`sum(${ledgerLines.creditCents})`,
      })
      .from(ledgerLines)
      .where(eq(ledgerLines.organizationId, organizationId))
      .groupBy(ledgerLines.accountCode);
    const net = (code: string) => {
      const s = sums.find((x) => x.code === code);
      return s ? Number(s.dr) - Number(s.cr) : 0;
    };
    const totalDr = sums.reduce((a, s) => a + Number(s.dr), 0);
    const totalCr = sums.reduce((a, s) => a + Number(s.cr), 0);
    expect(totalDr, 'trial balance balances').toBe(totalCr);

    const invs = await db.select().from(invoices).where(eq(invoices.organizationId, organizationId));
    let receivable = 0;
    for (const inv of invs) {
      const balance = inv.totalCents - inv.amountPaidCents;
      expect(balance, `invoice ${inv.invoiceNumber} balance`).toBeGreaterThanOrEqual(0);
      expect(inv.amountPaidCents).toBeGreaterThanOrEqual(0);
      if (!['draft', 'void', 'written_off'].includes(inv.status)) receivable += balance;
    }
    expect(net('1100'), 'AR = open invoice balances').toBe(receivable);

    const bs = await db.select().from(bills).where(eq(bills.organizationId, organizationId));
    let payable = 0;
    for (const b of bs) {
      const balance = b.totalCents - b.amountPaidCents;
      expect(balance, `bill ${b.billNumber} balance`).toBeGreaterThanOrEqual(0);
      expect(b.amountPaidCents).toBeGreaterThanOrEqual(0);
      if (['open', 'partially_paid', 'paid'].includes(b.status)) payable += balance;
    }
    expect(0 - net('2000'), 'AP = posted bill balances').toBe(payable);

    const [received] = await db
      .select({ n: sql<string>`coalesce(sum(${payments.amountCents}), 0)` })
      .from(payments)
      .where(eq(payments.organizationId, organizationId));
    const [paidOut] = await db
      .select({ n: sql<string>`coalesce(sum(${billPayments.amountCents}), 0)` })
      .from(billPayments)
      .where(sql`${billPayments.organizationId} = ${organizationId} AND ${billPayments.status} <> 'failed'`);
    const [refunded] = await db
      .select({ n: sql<string>`coalesce(sum(${paymentRefunds.amountCents}), 0)` })
      .from(paymentRefunds)
      .where(eq(paymentRefunds.organizationId, organizationId));
    expect(net('1000'), 'cash = received − refunded − paid out').toBe(
      Number(received?.n) - Number(refunded?.n) - Number(paidOut?.n),
    );
    const overRefunded = await db.execute(
      sql`SELECT id FROM payments WHERE organization_id = ${organizationId} AND (refunded_cents > amount_cents OR refunded_cents < 0)`,
    );
    expect(rowsOf(overRefunded), 'no payment refunded beyond its amount').toEqual([]);
  }

  it('every entry and the trial balance balance; AR and AP match the documents; no balance negative; a closed date’s trial balance never changes', async () => {
    let refundsMade = 0;
    let closes = 0;
    let refusedAsClosed = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(Command, { minLength: 25, maxLength: 25 }), async (commands: Cmd[]) => {
        const owner = await newTenant(h, { timezone: 'UTC' });
        const todayDate = today('UTC');
        const daysAgo = (n: number) => addDays(todayDate, -n);
        /** The trial balance as of each closed date, taken when it was closed. */
        const frozen = new Map<string, unknown>();
        let closedThrough: string | null = null;
        await setSettings(h, owner.organizationId, { taxRate: 8.25, billApprovalThresholdCents: 30_000 });
        const customer = await createCustomer(h, owner);
        const run = <T>(fn: (ctx: Ctx) => Promise<T>) =>
          inTenant(h.database.db, owner.organizationId, { kind: 'user', id: owner.userId, role: 'owner' }, fn);
        const vendor = await run((ctx) => createVendor(ctx, { name: 'Mulch Co' }));
        const invoiceIds: string[] = [];
        const billIds: string[] = [];
        const paymentIds: string[] = [];
        const deps = { mailer: h.app.deps.mailer, baseUrl: 'http://localhost' };

        for (const c of [...commands, ...refundTail]) {
          try {
            switch (c.kind) {
              case 'invoice': {
                const inv = await run((ctx) =>
                  createInvoice(ctx, {
                    customerId: customer.id,
                    invoiceDate: daysAgo(c.daysAgo),
                    lineItems: [{ description: 'Work', quantity: 1, unitPrice: c.cents / 100, taxable: c.taxed }],
                  }),
                );
                invoiceIds.push(inv.id);
                break;
              }
              case 'send': {
                const id = pick(invoiceIds, c.i);
                if (id) await run((ctx) => sendInvoice(ctx, id, deps));
                break;
              }
              case 'invoicePay': {
                const id = pick(invoiceIds, c.i);
                if (!id) break;
                const inv = await run((ctx) => getInvoice(ctx, id));
                const cents = Math.round(inv.balance * 100);
                if (cents > 0)
                  await run((ctx) =>
                    recordPayment(ctx, id, {
                      amount: share(cents, c.pct),
                      method: 'cash',
                      // Never before the invoice's own date (that is a 400 of its own).
                      paymentDate: daysAgo(
                        Math.min(c.daysAgo, (Date.parse(todayDate) - Date.parse(inv.invoiceDate)) / 86_400_000),
                      ),
                    }),
                  );
                break;
              }
              case 'refund': {
                // A refund of one of the invoice's payments: part of it, or the whole refundable rest.
                const id = pick(invoiceIds, c.i);
                if (!id) break;
                const received = await h.admin.db
                  .select({ id: payments.id, amount: payments.amountCents, refunded: payments.refundedCents })
                  .from(payments)
                  .where(eq(payments.invoiceId, id));
                const payment = pick(received, c.pct);
                if (!payment) break;
                const rest = payment.amount - payment.refunded;
                const amountCents = c.whole ? undefined : Math.max(1, Math.floor((rest * c.pct) / 100));
                await run((ctx) =>
                  refundPayment(ctx, payment.id, { amount: amountCents === undefined ? undefined : amountCents / 100 }),
                );
                refundsMade++;
                break;
              }
              case 'invoiceVoid': {
                const id = pick(invoiceIds, c.i);
                if (id) await run((ctx) => voidInvoice(ctx, id));
                break;
              }
              case 'writeOff': {
                const id = pick(invoiceIds, c.i);
                if (id) await run((ctx) => writeOffInvoice(ctx, id));
                break;
              }
              case 'bill': {
                const bill = await run((ctx) =>
                  createBill(ctx, {
                    vendorId: vendor.id,
                    draft: c.draft,
                    billDate: daysAgo(c.daysAgo),
                    lineItems: [
                      { description: 'Mulch', amount: Math.ceil(c.cents / 2) / 100 },
                      { description: 'Sub', amount: Math.floor(c.cents / 2) / 100 || 0.01, accountCode: '5200' },
                    ],
                  }),
                );
                billIds.push(bill.id);
                break;
              }
              case 'postBill': {
                const id = pick(billIds, c.i);
                if (id) await run((ctx) => postBill(ctx, id));
                break;
              }
              case 'approve': {
                const id = pick(billIds, c.i);
                if (id) await run((ctx) => approveBill(ctx, id));
                break;
              }
              case 'billVoid': {
                const id = pick(billIds, c.i);
                if (id) await run((ctx) => voidBill(ctx, id));
                break;
              }
              case 'billPay': {
                const allocations: { billId: string; amount: number }[] = [];
                for (const p of c.picks) {
                  const id = pick(billIds, p.i);
                  if (!id || allocations.some((a) => a.billId === id)) continue;
                  const bill = await run((ctx) => getBill(ctx, id));
                  const cents = Math.round(bill.balance * 100);
                  if (cents > 0) allocations.push({ billId: id, amount: share(cents, p.pct) });
                }
                if (allocations.length === 0) break;
                const paymentDate = c.scheduled ? addDays(today('UTC'), 3) : undefined;
                const payment = await run((ctx) =>
                  createBillPayment(ctx, { vendorId: vendor.id, method: 'ach', allocations, paymentDate }),
                );
                paymentIds.push(payment.id);
                break;
              }
              case 'settle': {
                const id = pick(paymentIds, c.i);
                if (id) await run((ctx) => settleBillPayment(ctx, id));
                break;
              }
              case 'fail': {
                const id = pick(paymentIds, c.i);
                if (id) await run((ctx) => failBillPayment(ctx, id, 'returned'));
                break;
              }
              case 'close': {
                const through = daysAgo(c.daysAgo);
                await run((ctx) => closePeriod(ctx, through));
                closedThrough = through;
                frozen.set(through, await run((ctx) => trialBalance(ctx, through)));
                closes++;
                break;
              }
              case 'reopen': {
                const through = c.daysAgo === null ? null : daysAgo(c.daysAgo);
                await run((ctx) => reopenPeriod(ctx, through));
                closedThrough = through;
                for (const d of frozen.keys()) if (through === null || d > through) frozen.delete(d);
                break;
              }
            }
          } catch (err) {
            // Refusals (409 from a state table or a closed period, 400 on a rule) are expected; anything else is a bug.
            if (!(err instanceof AppError) || err.status >= 500) throw err;
            if (err.code === 'PERIOD_CLOSED') refusedAsClosed++;
          }
          await checkBooks(owner.organizationId);
          // While a day stays closed, its trial balance is the one it had when it was closed.
          for (const [d, balance] of frozen) {
            expect(await run((ctx) => trialBalance(ctx, d)), `trial balance as of closed ${d}`).toEqual(balance);
          }
          if (closedThrough !== null) {
            const inside = await h.admin.db.execute(
              sql`SELECT count(*)::int AS n FROM ledger_entries WHERE organization_id = ${owner.organizationId} AND entry_date <= ${closedThrough} AND created_at > (SELECT updated_at FROM ledger_closes WHERE organization_id = ${owner.organizationId})`,
            );
            expect(rowsOf<{ n: number }>(inside)[0]?.n, 'no entry dated in the closed period after the close').toBe(0);
          }
        }
      }),
      { numRuns: RUNS },
    );
    // Refunds really went through, not only their refusals: at least the tail's, once a run.
    expect(refundsMade).toBeGreaterThanOrEqual(RUNS);
    // The close was exercised: periods were closed and postings into them refused.
    expect(closes).toBeGreaterThan(0);
    expect(refusedAsClosed).toBeGreaterThan(0);
  }, 900_000);
});
