import { and, desc, eq, type SQL } from 'drizzle-orm';
import type Stripe from 'stripe';
import { paymentIntents } from '../../db/schema/index.js';
import { AppError, invalidField, invalidState, notFound } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { fromCents, toCents } from '../../platform/money.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import { canTake, take } from '../../platform/state-machine.js';
import type { Ctx } from '../../platform/tenancy.js';
import { balanceCents, findRow } from '../invoices/invoices.service.js';
import { getOrgSettings } from '../settings/settings.service.js';
import {
  type IntentAction,
  type IntentSource,
  type IntentStatus,
  intentMachine,
  intentStatusOfStripe,
  PAYABLE_INVOICE_STATUSES,
} from './payment-intents.states.js';
import { paymentByProcessorId } from './payments.service.js';
import { centsToStripeAmount, type StripeDeps, stripeClient, stripeFailure, stripeKeyOf } from './stripe-client.js';

type IntentRow = typeof paymentIntents.$inferSelect;

/** Runs a function inside the caller's tenant transaction (a request's, or a portal token's). */
export type TenantRunner = <T>(fn: (ctx: Ctx) => Promise<T>) => Promise<T>;

export const intentView = (r: IntentRow) => ({
  id: r.id,
  invoiceId: r.invoiceId,
  amount: fromCents(r.amountCents),
  currency: r.currency,
  status: r.status as IntentStatus,
  processorIntentId: r.processorIntentId,
  clientSecret: r.clientSecret,
  source: r.source as IntentSource,
  paymentId: r.paymentId,
  lastError: r.lastError,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});
export type IntentView = ReturnType<typeof intentView>;

/** The invoice a card payment is started on, its state and the amount: every rule before Stripe is called. */
async function payableInvoice(ctx: Ctx, invoiceId: string, amount: number | undefined, lock: boolean) {
  const invoice = await findRow(ctx, invoiceId, lock).catch((err: unknown) => {
    if (err instanceof AppError && err.code === 'NOT_FOUND') {
      throw invalidField('invoiceId', 'names no invoice of this organization');
    }
    throw err;
  });
  if (!PAYABLE_INVOICE_STATUSES.has(invoice.status)) {
    throw invalidState(
      invoice.status === 'draft'
        ? 'Cannot take a card payment on a draft invoice: send it first'
        : `Cannot take a card payment on a ${invoice.status.replaceAll('_', ' ')} invoice`,
    );
  }
  const balance = balanceCents(invoice);
  const amountCents = amount === undefined ? balance : toCents(amount, 'amount');
  if (amountCents <= 0) throw invalidField('amount', 'must be greater than 0');
  if (amountCents > balance) throw invalidField('amount', `must not exceed the balance (${fromCents(balance)})`);
  return { invoice, amountCents };
}

export interface IntentInput {
  invoiceId: string;
  amount?: number | undefined;
}

/**
 * `POST /api/payments/intents` and the portal's pay: checks the invoice, creates the
 * PaymentIntent at Stripe (outside any transaction: no lock is held while Stripe
 * answers), then records it after checking the invoice again under its lock. A
 * request that fails anywhere writes nothing here; an intent Stripe created for a
 * request that then fails is canceled there.
 */
export async function createIntent(
  run: TenantRunner,
  deps: StripeDeps,
  input: IntentInput,
  source: IntentSource,
): Promise<IntentView> {
  const id = newId('pint');
  const plan = await run(async (ctx) => {
    const settings = await getOrgSettings(ctx);
    const key = stripeKeyOf(settings, deps.box);
    const { invoice, amountCents } = await payableInvoice(ctx, input.invoiceId, input.amount, false);
    // A customer who comes back to the link gets the intent they already started (Stripe's
    // advice: one PaymentIntent per checkout), not a second one that could be paid as well.
    const reusable = source === 'PORTAL' ? await openPortalIntent(ctx, invoice.id, amountCents) : undefined;
    return {
      reusable,
      key,
      organizationId: ctx.organizationId,
      invoice,
      amountCents,
      currency: settings.currency,
      companyName: settings.companyName ?? settings.name,
      stripeAmount: centsToStripeAmount(amountCents, settings.currency, 'amount'),
    };
  });

  if (plan.reusable) return intentView(plan.reusable);
  const stripe = stripeClient(plan.key, deps.api);
  let intent: Stripe.PaymentIntent;
  try {
    intent = await stripe.paymentIntents.create(
      {
        amount: plan.stripeAmount,
        currency: plan.currency.toLowerCase(),
        automatic_payment_methods: { enabled: true },
        description: `${plan.companyName}: invoice ${plan.invoice.invoiceNumber}`,
        metadata: {
          organizationId: plan.organizationId,
          invoiceId: plan.invoice.id,
          invoiceNumber: plan.invoice.invoiceNumber,
          intentId: id,
        },
      },
      // Our intent id names this creation: the SDK's retries of it create one PaymentIntent.
      { idempotencyKey: `${id}:create` },
    );
  } catch (err) {
    throw stripeFailure(err);
  }

  try {
    return await run(async (ctx) => {
      // The same lock every payment takes: a payment recorded meanwhile is seen here.
      await findRow(ctx, plan.invoice.id, true);
      // A payment_intent.succeeded that outran Stripe's answer already recorded the money:
      // the intent is recorded as succeeded. Otherwise the invoice must still take it.
      const paid = await paymentByProcessorId(ctx, intent.id);
      if (!paid) await payableInvoice(ctx, plan.invoice.id, fromCents(plan.amountCents), false);
      const now = new Date();
      const row: IntentRow = {
        id,
        organizationId: ctx.organizationId,
        invoiceId: plan.invoice.id,
        amountCents: plan.amountCents,
        currency: plan.currency,
        status: paid ? 'succeeded' : intentStatusOfStripe(intent.status),
        processorIntentId: intent.id,
        clientSecret: intent.client_secret ?? null,
        source,
        lastError: null,
        paymentId: paid?.id ?? null,
        statusEventAt: null,
        createdAt: now,
        updatedAt: now,
      };
      await ctx.tx.insert(paymentIntents).values(row);
      return intentView(row);
    });
  } catch (err) {
    // Nothing was recorded: leave no payable intent behind at Stripe either.
    await stripe.paymentIntents.cancel(intent.id, {}, { idempotencyKey: `${id}:cancel` }).catch(() => undefined);
    throw err;
  }
}

async function openPortalIntent(ctx: Ctx, invoiceId: string, amountCents: number): Promise<IntentRow | undefined> {
  const [row] = await ctx.tx
    .select()
    .from(paymentIntents)
    .where(
      and(
        eq(paymentIntents.organizationId, ctx.organizationId),
        eq(paymentIntents.invoiceId, invoiceId),
        eq(paymentIntents.source, 'PORTAL'),
        eq(paymentIntents.status, 'requires_payment_method'),
        eq(paymentIntents.amountCents, amountCents),
      ),
    )
    .orderBy(desc(paymentIntents.createdAt), desc(paymentIntents.id))
    .limit(1);
  return row;
}

async function findIntent(ctx: Ctx, id: string, lock: boolean): Promise<IntentRow> {
  const query = ctx.tx
    .select()
    .from(paymentIntents)
    .where(and(eq(paymentIntents.organizationId, ctx.organizationId), eq(paymentIntents.id, id)));
  const [row] = lock ? await query.for('update') : await query;
  if (!row) throw notFound('Payment intent');
  return row;
}

export async function getIntent(ctx: Ctx, id: string): Promise<IntentView> {
  return intentView(await findIntent(ctx, id, false));
}

export interface IntentListFilters {
  invoiceId?: string | undefined;
  status?: IntentStatus | undefined;
}

export async function listIntents(ctx: Ctx, q: IntentListFilters, page: Page) {
  const where: SQL[] = [eq(paymentIntents.organizationId, ctx.organizationId)];
  if (q.invoiceId) where.push(eq(paymentIntents.invoiceId, q.invoiceId));
  if (q.status) where.push(eq(paymentIntents.status, q.status));
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, paymentIntents, and(...where), page);
  return { rows: rows.map(intentView), ...more };
}

/**
 * `POST /api/payments/intents/{id}/cancel`: cancels at Stripe first (so the customer
 * can no longer pay it), then here. An intent that succeeded meanwhile stays succeeded
 * (409): Stripe refuses to cancel it, and so does the state machine.
 */
export async function cancelIntent(run: TenantRunner, deps: StripeDeps, id: string): Promise<IntentView> {
  const plan = await run(async (ctx) => {
    const intent = await findIntent(ctx, id, false);
    take(intentMachine, intent.status as IntentStatus, 'cancel');
    return { intent, key: stripeKeyOf(await getOrgSettings(ctx), deps.box) };
  });
  try {
    await stripeClient(plan.key, deps.api).paymentIntents.cancel(
      plan.intent.processorIntentId,
      { cancellation_reason: 'requested_by_customer' },
      { idempotencyKey: `${id}:cancel` },
    );
  } catch (err) {
    throw stripeFailure(err);
  }
  return run(async (ctx) => {
    // Invoice first, then the intent: the order the succeeded event takes.
    // A deleted invoice leaves nothing to lock; any other failure is a real error.
    await findRow(ctx, plan.intent.invoiceId, true).catch((err: unknown) => {
      if (!(err instanceof AppError && err.code === 'NOT_FOUND')) throw err;
    });
    const intent = await findIntent(ctx, id, true);
    const status = take(intentMachine, intent.status as IntentStatus, 'cancel');
    const [row] = await ctx.tx
      .update(paymentIntents)
      .set({ status, updatedAt: new Date() })
      .where(and(eq(paymentIntents.organizationId, ctx.organizationId), eq(paymentIntents.id, id)))
      .returning();
    return intentView(row as IntentRow);
  });
}

/** The intent row of a Stripe PaymentIntent, locked. */
async function intentByProcessorId(ctx: Ctx, processorIntentId: string): Promise<IntentRow | undefined> {
  const [row] = await ctx.tx
    .select()
    .from(paymentIntents)
    .where(
      and(
        eq(paymentIntents.organizationId, ctx.organizationId),
        eq(paymentIntents.processorIntentId, processorIntentId),
      ),
    )
    .for('update');
  return row;
}

/**
 * Moves the intent a Stripe event names. Final states are never left (except that a
 * success wins over a cancel: the money was taken); a non-final move older than the
 * event that last moved the intent changes nothing, so events may arrive in any order.
 * Returns whether anything changed. An intent created elsewhere (the Stripe dashboard)
 * has no row: nothing to move.
 */
export async function moveIntentByEvent(
  ctx: Ctx,
  processorIntentId: string,
  action: IntentAction,
  eventCreated: number,
  extra: { paymentId?: string; lastError?: string | null } = {},
): Promise<boolean> {
  const intent = await intentByProcessorId(ctx, processorIntentId);
  if (!intent) return false;
  const from = intent.status as IntentStatus;
  const at = new Date(eventCreated * 1000);
  if (!canTake(intentMachine, from, action)) {
    if (action === 'succeed' && extra.paymentId && !intent.paymentId) {
      await ctx.tx
        .update(paymentIntents)
        .set({ paymentId: extra.paymentId, updatedAt: new Date() })
        .where(and(eq(paymentIntents.organizationId, ctx.organizationId), eq(paymentIntents.id, intent.id)));
      return true;
    }
    return false;
  }
  const to = take(intentMachine, from, action);
  const finalMove = to === 'succeeded' || to === 'canceled';
  if (!finalMove && intent.statusEventAt && at < intent.statusEventAt) return false;
  await ctx.tx
    .update(paymentIntents)
    .set({
      status: to,
      statusEventAt: at,
      updatedAt: new Date(),
      ...(extra.paymentId ? { paymentId: extra.paymentId } : {}),
      ...(extra.lastError !== undefined ? { lastError: extra.lastError } : {}),
    })
    .where(and(eq(paymentIntents.organizationId, ctx.organizationId), eq(paymentIntents.id, intent.id)));
  return true;
}
