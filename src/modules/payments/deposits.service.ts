import { and, asc, eq, gte, inArray, isNull, lte, ne, or, type SQL, sql } from 'drizzle-orm';
import type Stripe from 'stripe';
import { sqlStateOf } from '../../db/pg-errors.js';
import { depositPayments, deposits, invoices, payments } from '../../db/schema/index.js';
import { today } from '../../platform/dates.js';
import { AppError, invalidField, notFound } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { fromCents, toCents } from '../../platform/money.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import type { Ctx } from '../../platform/tenancy.js';
import { calendarBound } from '../billing/date-filter.js';
import type { PaymentMethod } from '../invoices/invoices.schemas.js';
import { getOrgSettings } from '../settings/settings.service.js';
import { DEPOSITABLE_METHODS, type DepositOrigin } from './payment-intents.states.js';
import type { PaymentOrigin } from './payments.states.js';
import type { StripeOutcome } from './payments.stripe.js';
import { type StripeDeps, stripeAmountToCents, stripeClient } from './stripe-client.js';

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

export async function getDeposit(ctx: Ctx, id: string): Promise<DepositView> {
  const [row] = await ctx.tx
    .select()
    .from(deposits)
    .where(and(eq(deposits.organizationId, ctx.organizationId), eq(deposits.id, id)));
  if (!row) throw notFound('Deposit');
  return viewOf(ctx, row);
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
        `${id} is a ${p.method} payment: manual deposits take cash and check payments (Stripe payouts deposit card payments)`,
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
 * `payout.paid`: Stripe moved money to the bank. The payout becomes a deposit (once per
 * payout id), then the card payments it carried are matched through Stripe's balance
 * transactions of that payout. If Stripe cannot be asked (no key, an error), the deposit
 * stays unmatched and shows in the reconciliation report; a replay of the event tries
 * the matching again.
 */
export async function recordPayout(
  ctx: Ctx,
  payout: Stripe.Payout,
  deps: StripeDeps,
  stripeKey: (ctx: Ctx) => Promise<string | null>,
  currencyOk: (currency: unknown) => void,
): Promise<StripeOutcome> {
  currencyOk(payout.currency);
  const amountCents = stripeAmountToCents(payout.amount, payout.currency, 'data.object.amount');
  const { timezone } = await getOrgSettings(ctx);
  const arrival = typeof payout.arrival_date === 'number' ? new Date(payout.arrival_date * 1000) : new Date();
  const inserted = await ctx.tx
    .insert(deposits)
    .values({
      id: newId('dep'),
      organizationId: ctx.organizationId,
      depositDate: today(timezone, arrival),
      reference: payout.statement_descriptor ?? payout.description ?? null,
      amountCents,
      origin: 'STRIPE_PAYOUT',
      processorPayoutId: payout.id,
      createdAt: new Date(),
    })
    .onConflictDoNothing()
    .returning();
  let deposit = inserted[0];
  const fresh = deposit !== undefined;
  if (!deposit) {
    [deposit] = await ctx.tx
      .select()
      .from(deposits)
      .where(and(eq(deposits.organizationId, ctx.organizationId), eq(deposits.processorPayoutId, payout.id)))
      .for('update');
    if (!deposit) throw new AppError('CONFLICT', `Payout ${payout.id} is being recorded; Stripe retries this event`);
    const [linked] = await ctx.tx
      .select({ n: sql<number>`1` })
      .from(depositPayments)
      .where(and(eq(depositPayments.organizationId, ctx.organizationId), eq(depositPayments.depositId, deposit.id)))
      .limit(1);
    if (linked) return 'duplicate';
  }
  const matched = await matchPayout(ctx, deposit, deps, stripeKey);
  return fresh || matched > 0 ? 'recorded' : 'duplicate';
}

/** Links the undeposited card payments whose charges this payout carried; returns how many. */
async function matchPayout(
  ctx: Ctx,
  deposit: DepositRow,
  deps: StripeDeps,
  stripeKey: (ctx: Ctx) => Promise<string | null>,
): Promise<number> {
  const key = await stripeKey(ctx);
  if (!key || !deposit.processorPayoutId) return 0;
  const intentIds = new Set<string>();
  try {
    const stripe = stripeClient(key, deps.api);
    for await (const txn of stripe.balanceTransactions.list({
      payout: deposit.processorPayoutId,
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
    return 0;
  }
  if (intentIds.size === 0) return 0;
  const found = await ctx.tx
    .select()
    .from(payments)
    .where(and(eq(payments.organizationId, ctx.organizationId), inArray(payments.processorPaymentId, [...intentIds])))
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
 * `payout.failed`: the bank returned a payout Stripe had reported paid. Its deposit goes
 * (its card payments show as undeposited again); a payout never recorded changes nothing.
 */
export async function payoutFailed(ctx: Ctx, payout: Stripe.Payout): Promise<StripeOutcome> {
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
  return removed.length > 0 ? 'recorded' : 'duplicate';
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
export async function reconciliation(ctx: Ctx, q: ReconciliationQuery) {
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
  const undeposited = await ctx.tx
    .select({ payment: payments, invoiceNumber: invoices.invoiceNumber, customerId: invoices.customerId })
    .from(payments)
    .innerJoin(invoices, and(eq(invoices.organizationId, payments.organizationId), eq(invoices.id, payments.invoiceId)))
    .leftJoin(
      depositPayments,
      and(eq(depositPayments.organizationId, payments.organizationId), eq(depositPayments.paymentId, payments.id)),
    )
    .where(and(...paymentWhere))
    .orderBy(asc(payments.paymentDate), asc(payments.createdAt), asc(payments.id));

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

  const undepositedCents = (p: PaymentRow) => p.amountCents - p.refundedCents;
  return {
    from: from ?? null,
    to: to ?? null,
    undepositedPayments: undeposited
      .slice(0, REPORT_PAYMENT_LIMIT)
      .map(({ payment: p, invoiceNumber, customerId }) => ({
        id: p.id,
        invoiceId: p.invoiceId,
        invoiceNumber,
        customerId,
        paymentDate: p.paymentDate,
        method: p.method as PaymentMethod,
        origin: p.origin as PaymentOrigin,
        reference: p.reference,
        processorPaymentId: p.processorPaymentId,
        amount: fromCents(p.amountCents),
        undepositedAmount: fromCents(undepositedCents(p)),
      })),
    undepositedCount: undeposited.length,
    undepositedTotal: fromCents(undeposited.reduce((s, r) => s + undepositedCents(r.payment), 0)),
    deposits: views,
    depositedTotal: fromCents(depositRows.reduce((s, d) => s + d.amountCents, 0)),
    unmatchedPayouts: views.filter((d) => d.origin === 'STRIPE_PAYOUT' && d.paymentIds.length === 0),
  };
}
