import { and, asc, eq, gte, inArray, isNull, lte, ne, or, type SQL, sql } from 'drizzle-orm';
import type Stripe from 'stripe';
import { sqlStateOf } from '../../../db/pg-errors.js';
import { depositPayments, deposits, failedPayouts, payments } from '../../../db/schema/index.js';
import { today } from '../../../platform/dates.js';
import { AppError, invalidField } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import { fromCents, toCents } from '../../../platform/money.js';
import { ownedRows } from '../../../platform/owned-rows.js';
import { listPage } from '../../../platform/page-query.js';
import type { Page } from '../../../platform/pagination.js';
import { withArticle } from '../../../platform/state-machine.js';
import type { Ctx } from '../../../platform/tenancy.js';
import { calendarBound } from '../../billing/date-filter.js';
import { type InvoiceRef, invoiceRefs } from '../../invoices/invoices.refs.js';
import type { PaymentMethod } from '../../invoices/invoices.schemas.js';
import { assertPeriodOpen, openDateFor } from '../../ledger/ledger.close.js';
import { getOrgSettings } from '../../settings/settings.service.js';
import { DEPOSITABLE_METHODS, type DepositOrigin } from '../intents/payment-intents.states.js';
import type { PaymentOrigin } from '../payments.states.js';
import { checkCurrency, type StripeOutcome } from '../stripe/payments.stripe.js';
import { type StripeDeps, stripeAmountToCents, stripeClient, stripeKeyOrNull } from '../stripe/stripe-client.js';

type DepositRow = typeof deposits.$inferSelect;
type PaymentRow = typeof payments.$inferSelect;

interface DepositTotals {
  paymentIds: string[];
  paymentsTotalCents: number;
}

export const depositView = (d: DepositRow, totals: DepositTotals) => ({
  id: d.id,
  depositDate: d.depositDate,
  reference: d.reference,
  amount: fromCents(d.amountCents),
  origin: d.origin as DepositOrigin,
  processorPayoutId: d.processorPayoutId,
  paymentIds: totals.paymentIds,
  paymentsTotal: fromCents(totals.paymentsTotalCents),
  difference: fromCents(d.amountCents - totals.paymentsTotalCents),
  createdAt: d.createdAt,
});
export type DepositView = ReturnType<typeof depositView>;

async function totalsOf(ctx: Ctx, depositIds: string[]): Promise<Map<string, DepositTotals>> {
  const out = new Map<string, DepositTotals>(depositIds.map((id) => [id, { paymentIds: [], paymentsTotalCents: 0 }]));
  if (depositIds.length === 0) return out;
  const links = await ctx.tx
    .select()
    .from(depositPayments)
    .where(and(eq(depositPayments.organizationId, ctx.organizationId), inArray(depositPayments.depositId, depositIds)))
    .orderBy(asc(depositPayments.paymentId));
  for (const link of links) {
    const t = out.get(link.depositId);
    if (!t) continue;
    t.paymentIds.push(link.paymentId);
    t.paymentsTotalCents += link.amountCents;
  }
  return out;
}

async function viewOf(ctx: Ctx, row: DepositRow): Promise<DepositView> {
  return depositView(row, (await totalsOf(ctx, [row.id])).get(row.id) as DepositTotals);
}

const findDeposit = ownedRows(deposits, 'Deposit').find;

export async function getDeposit(ctx: Ctx, id: string): Promise<DepositView> {
  return viewOf(ctx, await findDeposit(ctx, id));
}

export interface DepositListFilters {
  origin?: DepositOrigin | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

async function dateBounds(ctx: Ctx, q: { from?: string | undefined; to?: string | undefined }) {
  if (q.from === undefined && q.to === undefined) return {};
  const { timezone } = await getOrgSettings(ctx);
  const from = q.from === undefined ? undefined : calendarBound('from', q.from, timezone);
  const to = q.to === undefined ? undefined : calendarBound('to', q.to, timezone);
  if (from !== undefined && to !== undefined && from > to) throw invalidField('to', 'must not be before from');
  return { from, to };
}

export async function listDeposits(ctx: Ctx, q: DepositListFilters, page: Page) {
  const where: SQL[] = [eq(deposits.organizationId, ctx.organizationId)];
  if (q.origin) where.push(eq(deposits.origin, q.origin));
  const { from, to } = await dateBounds(ctx, q);
  if (from !== undefined) where.push(gte(deposits.depositDate, from));
  if (to !== undefined) where.push(lte(deposits.depositDate, to));
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, deposits, and(...where), page);
  const totals = await totalsOf(
    ctx,
    rows.map((r) => r.id),
  );
  return { rows: rows.map((r) => depositView(r, totals.get(r.id) as DepositTotals)), ...more };
}

export interface DepositInput {
  depositDate: string;
  reference?: string | undefined;
  paymentIds: string[];
  amount?: number | undefined;
}

const alreadyDeposited = (paymentId: string, depositId?: string) =>
  new AppError(
    'CONFLICT',
    `Payment ${paymentId} is already in ${depositId ? `deposit ${depositId}` : 'a deposit'}: a payment is deposited once`,
  );

/**
 * `POST /api/payments/deposits`: the office takes a run of cash and check payments to
 * the bank. The payments are locked (in id order, so two runs never deadlock), then
 * checked: a payment already in a deposit is a 409, and the unique (organization,
 * payment) index stops two concurrent runs that slipped past each other. Deposits
 * group money; they post nothing to the ledger.
 */
export async function createDeposit(ctx: Ctx, input: DepositInput): Promise<DepositView> {
  const { timezone } = await getOrgSettings(ctx);
  const todayDate = today(timezone);
  if (input.depositDate > todayDate) throw invalidField('depositDate', `must not be after today (${todayDate})`);
  // Deposits post nothing, but the accountant's closed month holds its bank deposits too (§11).
  await assertPeriodOpen(ctx, [{ field: 'depositDate', date: input.depositDate }]);
  const seen = new Set<string>();
  input.paymentIds.forEach((id, i) => {
    if (seen.has(id)) throw invalidField(`paymentIds.${i}`, `${id} is listed twice`);
    seen.add(id);
  });
  const rows = await ctx.tx
    .select()
    .from(payments)
    .where(and(eq(payments.organizationId, ctx.organizationId), inArray(payments.id, input.paymentIds)))
    .orderBy(asc(payments.id))
    .for('update');
  const byId = new Map(rows.map((r) => [r.id, r]));
  const chosen: PaymentRow[] = input.paymentIds.map((id, i) => {
    const p = byId.get(id);
    if (!p) throw invalidField(`paymentIds.${i}`, `${id} names no payment of this organization`);
    if (!DEPOSITABLE_METHODS.has(p.method) || p.origin !== 'API') {
      throw invalidField(
        `paymentIds.${i}`,
        `${id} is ${withArticle(`${p.method} payment`)}: manual deposits take cash and check payments (Stripe payouts deposit card payments)`,
      );
    }
    if (p.status === 'refunded')
      throw invalidField(`paymentIds.${i}`, `${id} was refunded in full: nothing to deposit`);
    return p;
  });
  const [taken] = await ctx.tx
    .select()
    .from(depositPayments)
    .where(
      and(eq(depositPayments.organizationId, ctx.organizationId), inArray(depositPayments.paymentId, input.paymentIds)),
    )
    .limit(1);
  if (taken) throw alreadyDeposited(taken.paymentId, taken.depositId);

  const paymentsTotal = chosen.reduce((s, p) => s + p.amountCents - p.refundedCents, 0);
  const row: DepositRow = {
    id: newId('dep'),
    organizationId: ctx.organizationId,
    depositDate: input.depositDate,
    reference: input.reference?.trim() || null,
    amountCents: input.amount === undefined ? paymentsTotal : toCents(input.amount, 'amount'),
    origin: 'MANUAL',
    processorPayoutId: null,
    createdAt: new Date(),
  };
  try {
    await ctx.tx.insert(deposits).values(row);
    await ctx.tx.insert(depositPayments).values(
      chosen.map((p) => ({
        organizationId: ctx.organizationId,
        depositId: row.id,
        paymentId: p.id,
        amountCents: p.amountCents - p.refundedCents,
      })),
    );
  } catch (err) {
    if (sqlStateOf(err) === '23505') throw alreadyDeposited(chosen.map((p) => p.id).join(', '));
    throw err;
  }
  return viewOf(ctx, row);
}

/**
 * Serialises the events of one payout (`payout.paid` and `payout.failed` may arrive at
 * once): each takes this transaction-level lock before it reads or writes the payout.
 */
async function lockPayout(ctx: Ctx, payoutId: string): Promise<void> {
  await ctx.tx.execute(
    sql`SELECT pg_advisory_xact_lock(hashtextextended(${`payout:${ctx.organizationId}:${payoutId}`}, 0))`,
  );
}

async function payoutFailedBefore(ctx: Ctx, payoutId: string): Promise<boolean> {
  const [row] = await ctx.tx
    .select({ n: sql<number>`1` })
    .from(failedPayouts)
    .where(and(eq(failedPayouts.organizationId, ctx.organizationId), eq(failedPayouts.processorPayoutId, payoutId)));
  return row !== undefined;
}

async function depositOfPayout(ctx: Ctx, payoutId: string, lock: boolean): Promise<DepositRow | undefined> {
  const query = ctx.tx
    .select()
    .from(deposits)
    .where(and(eq(deposits.organizationId, ctx.organizationId), eq(deposits.processorPayoutId, payoutId)));
  const [row] = lock ? await query.for('update') : await query;
  return row;
}

async function holdsPayments(ctx: Ctx, depositId: string): Promise<boolean> {
  const [linked] = await ctx.tx
    .select({ n: sql<number>`1` })
    .from(depositPayments)
    .where(and(eq(depositPayments.organizationId, ctx.organizationId), eq(depositPayments.depositId, depositId)))
    .limit(1);
  return linked !== undefined;
}

/** What `payout.paid` needs before Stripe is asked: the deposit to record, and the key to ask with. */
export interface PayoutPlan {
  /** Set when there is nothing to do: the payout failed, or its deposit is recorded and matched. */
  done?: StripeOutcome;
  amountCents: number;
  depositDate: string;
  /** The organization's Stripe key; null when none is set (the deposit is recorded unmatched). */
  key: string | null;
}

/**
 * `payout.paid`, step 1 (a short read-only transaction): the settings are read once, the
 * currency and amount checked, and a payout already failed or already matched is done
 * without calling Stripe.
 */
export async function planPayout(ctx: Ctx, payout: Stripe.Payout, deps: StripeDeps): Promise<PayoutPlan> {
  const settings = await getOrgSettings(ctx);
  checkCurrency(payout.currency, settings.currency, 'data.object.currency');
  const amountCents = stripeAmountToCents(payout.amount, payout.currency, 'data.object.amount');
  const arrival = typeof payout.arrival_date === 'number' ? new Date(payout.arrival_date * 1000) : new Date();
  const plan: PayoutPlan = { amountCents, depositDate: today(settings.timezone, arrival), key: null };
  if (await payoutFailedBefore(ctx, payout.id)) return { ...plan, done: 'duplicate' };
  const recorded = await depositOfPayout(ctx, payout.id, false);
  if (recorded && (await holdsPayments(ctx, recorded.id))) return { ...plan, done: 'duplicate' };
  return { ...plan, key: stripeKeyOrNull(settings, deps.box) };
}

/**
 * `payout.paid`, step 2 (outside any transaction): the PaymentIntent ids of the charges
 * the payout carried, paged through Stripe's balance transactions of that payout. Null
 * when Stripe cannot be asked (no key, an error): the deposit is then recorded unmatched
 * and shows in the reconciliation report; a replay of the event tries the matching again.
 */
export async function payoutIntentIds(
  payoutId: string,
  key: string | null,
  api: StripeDeps['api'],
): Promise<string[] | null> {
  if (!key) return null;
  const intentIds = new Set<string>();
  try {
    for await (const txn of stripeClient(key, api).balanceTransactions.list({
      payout: payoutId,
      expand: ['data.source'],
      limit: 100,
    })) {
      const source = txn.source as { object?: string; payment_intent?: unknown } | string | null;
      if (source && typeof source === 'object') {
        const pi = source.payment_intent;
        const id = typeof pi === 'string' ? pi : (pi as { id?: unknown } | null)?.id;
        if (typeof id === 'string') intentIds.add(id);
      }
      if (intentIds.size > 10_000) break;
    }
  } catch {
    return null;
  }
  return [...intentIds];
}

/**
 * `payout.paid`, step 3 (one short transaction): the payout becomes a deposit (once per
 * payout id) holding the undeposited card payments whose intents Stripe listed. A payout
 * whose `payout.failed` came first records nothing: a failed payout is final at Stripe. A payout
 * that arrived in the closed period (the event came after the close) is dated the first open
 * day: the closed month holds its deposits (§11), and Stripe's event cannot be refused.
 */
export async function recordPayout(
  ctx: Ctx,
  payout: Stripe.Payout,
  plan: PayoutPlan,
  intentIds: string[] | null,
): Promise<StripeOutcome> {
  await lockPayout(ctx, payout.id);
  if (await payoutFailedBefore(ctx, payout.id)) return 'duplicate';
  const depositDate = await openDateFor(ctx, plan.depositDate);
  const inserted = await ctx.tx
    .insert(deposits)
    .values({
      id: newId('dep'),
      organizationId: ctx.organizationId,
      depositDate,
      reference: payout.statement_descriptor ?? payout.description ?? null,
      amountCents: plan.amountCents,
      origin: 'STRIPE_PAYOUT',
      processorPayoutId: payout.id,
      createdAt: new Date(),
    })
    .onConflictDoNothing()
    .returning();
  const deposit = inserted[0] ?? (await depositOfPayout(ctx, payout.id, true));
  if (!deposit) throw new AppError('CONFLICT', `Payout ${payout.id} is being recorded; Stripe retries this event`);
  const fresh = inserted[0] !== undefined;
  if (!fresh && (await holdsPayments(ctx, deposit.id))) return 'duplicate';
  const matched = intentIds ? await linkPayoutPayments(ctx, deposit, intentIds) : 0;
  return fresh || matched > 0 ? 'recorded' : 'duplicate';
}

/** Links the undeposited card payments of these PaymentIntents to the payout's deposit; returns how many. */
async function linkPayoutPayments(ctx: Ctx, deposit: DepositRow, intentIds: string[]): Promise<number> {
  if (intentIds.length === 0) return 0;
  const found = await ctx.tx
    .select()
    .from(payments)
    .where(and(eq(payments.organizationId, ctx.organizationId), inArray(payments.processorPaymentId, intentIds)))
    .orderBy(asc(payments.id))
    .for('update');
  if (found.length === 0) return 0;
  const linked = await ctx.tx
    .insert(depositPayments)
    .values(
      found.map((p) => ({
        organizationId: ctx.organizationId,
        depositId: deposit.id,
        paymentId: p.id,
        amountCents: p.amountCents - p.refundedCents,
      })),
    )
    .onConflictDoNothing()
    .returning();
  return linked.length;
}

/**
 * `payout.failed`: the bank returned the payout (or Stripe could not pay it out). Its
 * deposit goes (its card payments show as undeposited again), and the failure is
 * remembered, so a `payout.paid` of this payout arriving later records nothing.
 */
export async function payoutFailed(ctx: Ctx, payout: Stripe.Payout): Promise<StripeOutcome> {
  await lockPayout(ctx, payout.id);
  const remembered = await ctx.tx
    .insert(failedPayouts)
    .values({
      organizationId: ctx.organizationId,
      processorPayoutId: payout.id,
      failureCode: payout.failure_code ?? null,
    })
    .onConflictDoNothing()
    .returning({ id: failedPayouts.processorPayoutId });
  const removed = await ctx.tx
    .delete(deposits)
    .where(
      and(
        eq(deposits.organizationId, ctx.organizationId),
        eq(deposits.origin, 'STRIPE_PAYOUT'),
        eq(deposits.processorPayoutId, payout.id),
      ),
    )
    .returning({ id: deposits.id });
  return removed.length > 0 || remembered.length > 0 ? 'recorded' : 'duplicate';
}

export interface ReconciliationQuery {
  from?: string | undefined;
  to?: string | undefined;
}

/** How many undeposited payments the report lists at most (the total counts them all). */
export const REPORT_PAYMENT_LIMIT = 1000;

/**
 * `GET /api/payments/reconciliation?from&to`: what reached the bank and what did not.
 * Undeposited: cash and check payments recorded by the office and card payments taken
 * by Stripe (paymentDate within from..to) that no deposit holds, less what was refunded
 * (a payment refunded in full is not waiting for the bank). Deposits (depositDate within
 * from..to) with the money the bank got, the payments they hold and the difference
 * (a payout's Stripe fees, a miscounted run). Unmatched payouts: payouts holding no payment.
 */
export async function reconciliation(ctx: Ctx, q: ReconciliationQuery, listLimit = REPORT_PAYMENT_LIMIT) {
  const { from, to } = await dateBounds(ctx, q);
  const paymentWhere: SQL[] = [
    eq(payments.organizationId, ctx.organizationId),
    ne(payments.status, 'refunded'),
    or(
      and(eq(payments.origin, 'API'), inArray(payments.method, [...DEPOSITABLE_METHODS])),
      eq(payments.origin, 'STRIPE'),
    ) as SQL,
    isNull(depositPayments.paymentId),
  ];
  if (from !== undefined) paymentWhere.push(gte(payments.paymentDate, from));
  if (to !== undefined) paymentWhere.push(lte(payments.paymentDate, to));
  const undepositedCents = sql<number>`${payments.amountCents} - ${payments.refundedCents}`;
  const depositLink = and(
    eq(depositPayments.organizationId, payments.organizationId),
    eq(depositPayments.paymentId, payments.id),
  );
  // The list is capped in SQL; the count and the total cover every undeposited payment.
  const undeposited = await ctx.tx
    .select({ payment: payments })
    .from(payments)
    .leftJoin(depositPayments, depositLink)
    .where(and(...paymentWhere))
    .orderBy(asc(payments.paymentDate), asc(payments.createdAt), asc(payments.id))
    .limit(listLimit);
  const [summary] = await ctx.tx
    .select({
      count: sql<string | number>`count(*)`,
      cents: sql<string | number>`coalesce(sum(${undepositedCents}), 0)`,
    })
    .from(payments)
    .leftJoin(depositPayments, depositLink)
    .where(and(...paymentWhere));

  const depositWhere: SQL[] = [eq(deposits.organizationId, ctx.organizationId)];
  if (from !== undefined) depositWhere.push(gte(deposits.depositDate, from));
  if (to !== undefined) depositWhere.push(lte(deposits.depositDate, to));
  const depositRows = await ctx.tx
    .select()
    .from(deposits)
    .where(and(...depositWhere))
    .orderBy(asc(deposits.depositDate), asc(deposits.createdAt), asc(deposits.id));
  const totals = await totalsOf(
    ctx,
    depositRows.map((d) => d.id),
  );
  const views = depositRows.map((d) => depositView(d, totals.get(d.id) as DepositTotals));
  // Each listed payment's invoice number and customer, from the invoices module in one read.
  const refs = await invoiceRefs(
    ctx,
    undeposited.map(({ payment }) => payment.invoiceId),
  );

  return {
    from: from ?? null,
    to: to ?? null,
    undepositedPayments: undeposited.map(({ payment: p }) => ({
      id: p.id,
      invoiceId: p.invoiceId,
      invoiceNumber: (refs.get(p.invoiceId) as InvoiceRef).invoiceNumber,
      customerId: (refs.get(p.invoiceId) as InvoiceRef).customerId,
      paymentDate: p.paymentDate,
      method: p.method as PaymentMethod,
      origin: p.origin as PaymentOrigin,
      reference: p.reference,
      processorPaymentId: p.processorPaymentId,
      amount: fromCents(p.amountCents),
      undepositedAmount: fromCents(p.amountCents - p.refundedCents),
    })),
    undepositedCount: Number(summary?.count ?? 0),
    undepositedTotal: fromCents(Number(summary?.cents ?? 0)),
    deposits: views,
    depositedTotal: fromCents(depositRows.reduce((s, d) => s + d.amountCents, 0)),
    unmatchedPayouts: views.filter((d) => d.origin === 'STRIPE_PAYOUT' && d.paymentIds.length === 0),
  };
}
