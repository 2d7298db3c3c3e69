import { and, eq, inArray, isNotNull, isNull, type SQL } from 'drizzle-orm';
import type Stripe from 'stripe';
import { paymentIntents } from '../../../db/schema/index.js';
import { AppError, invalidField, invalidState } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import { fromCents, toCents } from '../../../platform/money.js';
import { ownedRows } from '../../../platform/owned-rows.js';
import { listPage } from '../../../platform/page-query.js';
import type { Page } from '../../../platform/pagination.js';
import { canTake, take, withArticle } from '../../../platform/state-machine.js';
import type { Ctx } from '../../../platform/tenancy.js';
import { balanceCents, findRow } from '../../invoices/invoices.service.js';
import { getOrgSettings } from '../../settings/settings.service.js';
import { paymentByProcessorId } from '../payments.service.js';
import {
  centsToStripeAmount,
  type StripeDeps,
  stripeClient,
  stripeFailure,
  stripeKeyOf,
  stripeKeyOrNull,
} from '../stripe/stripe-client.js';
import {
  type IntentAction,
  type IntentSource,
  type IntentStatus,
  intentMachine,
  intentStatusOfStripe,
  OPEN_INTENT_STATUSES,
  PAYABLE_INVOICE_STATUSES,
} from './payment-intents.states.js';

type IntentRow = typeof paymentIntents.$inferSelect;

/** Runs a function inside the caller's tenant transaction (a request's, or a portal token's). */
export type TenantRunner = <T>(fn: (ctx: Ctx) => Promise<T>) => Promise<T>;

/** Only rows Stripe answered for are shown: a portal reservation (no Stripe id yet) never is. */
const shown = isNotNull(paymentIntents.processorIntentId);

export const intentView = (r: IntentRow) => ({
  id: r.id,
  invoiceId: r.invoiceId,
  amount: fromCents(r.amountCents),
  currency: r.currency,
  status: r.status as IntentStatus,
  processorIntentId: r.processorIntentId ?? '',
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
        : `Cannot take a card payment on ${withArticle(`${invoice.status} invoice`)}`,
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

/** What Stripe is asked to create for an intent row (the same for every retry of that row). */
function createParams(row: IntentRow, invoiceNumber: string, companyName: string) {
  return {
    amount: centsToStripeAmount(row.amountCents, row.currency, 'amount'),
    currency: row.currency.toLowerCase(),
    automatic_payment_methods: { enabled: true },
    description: `${companyName}: invoice ${invoiceNumber}`,
    metadata: {
      organizationId: row.organizationId,
      invoiceId: row.invoiceId,
      invoiceNumber,
      intentId: row.id,
    },
  } satisfies Stripe.PaymentIntentCreateParams;
}

function newIntentRow(ctx: Ctx, invoiceId: string, amountCents: number, currency: string, source: IntentSource) {
  const now = new Date();
  return {
    id: newId('pint'),
    organizationId: ctx.organizationId,
    invoiceId,
    amountCents,
    currency,
    status: 'requires_payment_method',
    processorIntentId: null,
    clientSecret: null,
    source,
    lastError: null,
    paymentId: null,
    statusEventAt: null,
    createdAt: now,
    updatedAt: now,
  } satisfies IntentRow;
}

/**
 * Under the invoice's lock, after Stripe answered: the payment a `payment_intent.succeeded`
 * that outran Stripe's answer already recorded, or else the invoice must still take the amount.
 */
async function recheckUnderLock(ctx: Ctx, invoiceId: string, amountCents: number, intent: Stripe.PaymentIntent) {
  await findRow(ctx, invoiceId, true);
  const paid = await paymentByProcessorId(ctx, intent.id);
  if (!paid) await payableInvoice(ctx, invoiceId, fromCents(amountCents), false);
  return {
    status: paid ? ('succeeded' as const) : intentStatusOfStripe(intent.status),
    paymentId: paid?.id ?? null,
  };
}

/**
 * `POST /api/payments/intents`: checks the invoice, creates the PaymentIntent at Stripe
 * (outside any transaction: no lock is held while Stripe answers), then records it after
 * checking the invoice again under its lock. A request that fails anywhere writes nothing
 * here; an intent Stripe created for a request that then fails is canceled there.
 */
export async function createIntent(run: TenantRunner, deps: StripeDeps, input: IntentInput): Promise<IntentView> {
  const plan = await run(async (ctx) => {
    const settings = await getOrgSettings(ctx);
    const key = stripeKeyOf(settings, deps.box);
    const { invoice, amountCents } = await payableInvoice(ctx, input.invoiceId, input.amount, false);
    centsToStripeAmount(amountCents, settings.currency, 'amount'); // an amount the currency cannot express: 400 now
    return {
      key,
      invoice,
      row: newIntentRow(ctx, invoice.id, amountCents, settings.currency, 'API'),
      companyName: settings.companyName ?? settings.name,
    };
  });
  const stripe = stripeClient(plan.key, deps.api);
  let intent: Stripe.PaymentIntent;
  try {
    // Our intent id names this creation: the SDK's retries of it create one PaymentIntent.
    intent = await stripe.paymentIntents.create(createParams(plan.row, plan.invoice.invoiceNumber, plan.companyName), {
      idempotencyKey: `${plan.row.id}:create`,
    });
  } catch (err) {
    throw stripeFailure(err);
  }
  try {
    return await run(async (ctx) => {
      const checked = await recheckUnderLock(ctx, plan.invoice.id, plan.row.amountCents, intent);
      const row: IntentRow = {
        ...plan.row,
        ...checked,
        processorIntentId: intent.id,
        clientSecret: intent.client_secret ?? null,
      };
      await ctx.tx.insert(paymentIntents).values(row);
      return intentView(row);
    });
  } catch (err) {
    // Nothing was recorded: leave no payable intent behind at Stripe either.
    await cancelQuietly(stripe, intent.id, plan.row.id);
    throw err;
  }
}

const cancelQuietly = (stripe: Stripe, processorIntentId: string, id: string) =>
  stripe.paymentIntents.cancel(processorIntentId, {}, { idempotencyKey: `${id}:cancel` }).catch(() => undefined);

/** The invoice's one open portal intent (or its reservation), if any. */
async function openPortalIntent(ctx: Ctx, invoiceId: string): Promise<IntentRow | undefined> {
  const [row] = await ctx.tx
    .select()
    .from(paymentIntents)
    .where(
      and(
        eq(paymentIntents.organizationId, ctx.organizationId),
        eq(paymentIntents.invoiceId, invoiceId),
        eq(paymentIntents.source, 'PORTAL'),
        inArray(paymentIntents.status, [...OPEN_INTENT_STATUSES]),
      ),
    )
    .for('update');
  return row;
}

type PortalStep =
  | { kind: 'done'; row: IntentRow }
  | { kind: 'create'; row: IntentRow; key: string; invoiceNumber: string; companyName: string }
  | { kind: 'update'; row: IntentRow; key: string; amountCents: number };

/**
 * `POST /api/portal/{token}/pay`: at most one open portal intent per invoice, whatever
 * the customer's browser sends at once. Under the invoice's row lock the call finds the
 * open intent or reserves one (a row without a Stripe id; the partial unique index
 * `payment_intents_portal_open_uq` is the backstop). Then, outside any transaction:
 * the same amount is answered as it is; a new reservation is created at Stripe with
 * the reservation's idempotency key, so concurrent calls that found the same
 * reservation get the same PaymentIntent; another amount updates the open intent at
 * Stripe (one PaymentIntent per checkout). Last, under the invoice's lock again, the
 * row is filled in or the amount recorded.
 */
export async function payFromPortal(
  run: TenantRunner,
  deps: StripeDeps,
  invoiceId: string,
  amount: number | undefined,
): Promise<IntentView> {
  const step = await run(async (ctx): Promise<PortalStep> => {
    const settings = await getOrgSettings(ctx);
    const key = stripeKeyOf(settings, deps.box);
    // The invoice's lock serialises every pay call of the link: the check and the reservation are one step.
    const { invoice, amountCents } = await payableInvoice(ctx, invoiceId, amount, true);
    centsToStripeAmount(amountCents, settings.currency, 'amount'); // an amount the currency cannot express: 400 now
    const create = (row: IntentRow): PortalStep => ({
      kind: 'create',
      row,
      key,
      invoiceNumber: invoice.invoiceNumber,
      companyName: settings.companyName ?? settings.name,
    });
    const open = await openPortalIntent(ctx, invoice.id);
    if (open && open.amountCents === amountCents)
      return open.processorIntentId ? { kind: 'done', row: open } : create(open);
    if (open?.processorIntentId) {
      if (open.status !== 'requires_payment_method') {
        throw invalidState(
          `A card payment of ${fromCents(open.amountCents)} on this invoice is being processed: wait for it before paying another amount`,
        );
      }
      return { kind: 'update', row: open, key, amountCents };
    }
    // A reservation for another amount (a call still at Stripe, or one that died there) gives way:
    // its caller finds its row gone and cancels what Stripe made for it.
    if (open) {
      await ctx.tx
        .delete(paymentIntents)
        .where(and(eq(paymentIntents.organizationId, ctx.organizationId), eq(paymentIntents.id, open.id)));
    }
    const row = newIntentRow(ctx, invoice.id, amountCents, settings.currency, 'PORTAL');
    await ctx.tx.insert(paymentIntents).values(row);
    return create(row);
  });
  if (step.kind === 'done') return intentView(step.row);
  const stripe = stripeClient(step.key, deps.api);
  return step.kind === 'create' ? createReserved(run, stripe, step) : updatePortalAmount(run, stripe, step);
}

async function createReserved(
  run: TenantRunner,
  stripe: Stripe,
  step: Extract<PortalStep, { kind: 'create' }>,
): Promise<IntentView> {
  const { row } = step;
  const unreserve = () =>
    run((ctx) =>
      ctx.tx
        .delete(paymentIntents)
        .where(
          and(
            eq(paymentIntents.organizationId, ctx.organizationId),
            eq(paymentIntents.id, row.id),
            isNull(paymentIntents.processorIntentId),
          ),
        ),
    );
  let intent: Stripe.PaymentIntent;
  try {
    intent = await stripe.paymentIntents.create(createParams(row, step.invoiceNumber, step.companyName), {
      idempotencyKey: `${row.id}:create`,
    });
  } catch (err) {
    await unreserve();
    throw stripeFailure(err);
  }
  try {
    return await run(async (ctx) => {
      const checked = await recheckUnderLock(ctx, row.invoiceId, row.amountCents, intent);
      const ours = and(eq(paymentIntents.organizationId, ctx.organizationId), eq(paymentIntents.id, row.id));
      const [filled] = await ctx.tx
        .update(paymentIntents)
        .set({
          ...checked,
          processorIntentId: intent.id,
          clientSecret: intent.client_secret ?? null,
          updatedAt: new Date(),
        })
        .where(and(ours, isNull(paymentIntents.processorIntentId)))
        .returning();
      // A concurrent call of the same reservation filled it first: its row is the answer
      // (Stripe's answer here may already be older than an event that moved the intent).
      const [current] = filled
        ? [filled]
        : await ctx.tx
            .select()
            .from(paymentIntents)
            .where(and(ours, eq(paymentIntents.processorIntentId, intent.id)));
      if (!current) {
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          'The payment was started again meanwhile; nothing was recorded, try again',
        );
      }
      return intentView(current);
    });
  } catch (err) {
    await cancelQuietly(stripe, intent.id, row.id);
    await unreserve();
    throw err;
  }
}

async function updatePortalAmount(
  run: TenantRunner,
  stripe: Stripe,
  step: Extract<PortalStep, { kind: 'update' }>,
): Promise<IntentView> {
  const { row } = step;
  const processorIntentId = row.processorIntentId as string;
  let intent: Stripe.PaymentIntent;
  try {
    intent = await stripe.paymentIntents.update(
      processorIntentId,
      { amount: centsToStripeAmount(step.amountCents, row.currency, 'amount') },
      // Names this change of this version of the row: concurrent calls asking the same converge.
      { idempotencyKey: `${row.id}:amount:${step.amountCents}:${row.updatedAt.getTime()}` },
    );
  } catch (err) {
    throw stripeFailure(err);
  }
  return run(async (ctx) => {
    await recheckUnderLock(ctx, row.invoiceId, step.amountCents, intent);
    const [updated] = await ctx.tx
      .update(paymentIntents)
      .set({ amountCents: step.amountCents, updatedAt: new Date() })
      .where(
        and(
          eq(paymentIntents.organizationId, ctx.organizationId),
          eq(paymentIntents.id, row.id),
          inArray(paymentIntents.status, [...OPEN_INTENT_STATUSES]),
        ),
      )
      .returning();
    if (!updated) throw invalidState('The card payment on this invoice finished meanwhile; open the link again');
    return intentView(updated);
  });
}

/** An intent the organization can see (one Stripe has answered for); 404 otherwise. */
const findIntent = ownedRows(paymentIntents, 'Payment intent', shown).find;

export async function getIntent(ctx: Ctx, id: string): Promise<IntentView> {
  return intentView(await findIntent(ctx, id, false));
}

export interface IntentListFilters {
  invoiceId?: string | undefined;
  status?: IntentStatus | undefined;
}

export async function listIntents(ctx: Ctx, q: IntentListFilters, page: Page) {
  const where: SQL[] = [eq(paymentIntents.organizationId, ctx.organizationId), shown];
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
      plan.intent.processorIntentId as string,
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

/**
 * An intent left open on an invoice that was closed otherwise (paid by cash or check,
 * voided, written off): canceled at Stripe, outside any transaction, then here. The
 * invoice is checked under its lock first: one that took money back and is payable
 * again keeps its intent. A failure at Stripe is noted on the intent and tried again by
 * the next sweep; an intent that succeeds at Stripe anyway is recorded by its event as
 * any payment (the excess kept as unapplied). Returns whether the intent was settled.
 */
export async function cancelIntentOfClosedInvoice(run: TenantRunner, deps: StripeDeps, id: string): Promise<boolean> {
  const plan = await run(async (ctx) => {
    const [intent] = await ctx.tx
      .select()
      .from(paymentIntents)
      .where(and(eq(paymentIntents.organizationId, ctx.organizationId), eq(paymentIntents.id, id)));
    if (intent?.status !== 'requires_payment_method') return null;
    const invoice = await findRow(ctx, intent.invoiceId, true);
    if (PAYABLE_INVOICE_STATUSES.has(invoice.status)) return null;
    if (!intent.processorIntentId) {
      // A portal reservation Stripe never answered for: its caller cancels whatever Stripe made.
      await ctx.tx
        .delete(paymentIntents)
        .where(and(eq(paymentIntents.organizationId, ctx.organizationId), eq(paymentIntents.id, id)));
      return null;
    }
    return { processorIntentId: intent.processorIntentId, key: stripeKeyOrNull(await getOrgSettings(ctx), deps.box) };
  });
  if (!plan) return false;
  let lastError: string | null = null;
  if (plan.key) {
    try {
      await stripeClient(plan.key, deps.api).paymentIntents.cancel(
        plan.processorIntentId,
        { cancellation_reason: 'abandoned' },
        { idempotencyKey: `${id}:close` },
      );
    } catch (err) {
      lastError = `Could not cancel at Stripe after the invoice was closed: ${stripeFailure(err).message}`;
    }
  } else {
    lastError = 'Not canceled at Stripe (no usable Stripe key): cancel it in the Stripe dashboard';
  }
  return run(async (ctx) => {
    // Invoice first, then the intent: the order the succeeded event takes.
    await findRow(ctx, (await findIntent(ctx, id, false)).invoiceId, true);
    const intent = await findIntent(ctx, id, true);
    if (!canTake(intentMachine, intent.status as IntentStatus, 'cancel')) return false;
    const failedAtStripe = lastError !== null && plan.key !== null;
    await ctx.tx
      .update(paymentIntents)
      .set({
        // Stripe still holds it open: kept open here, tried again by the next sweep.
        ...(failedAtStripe ? {} : { status: take(intentMachine, intent.status as IntentStatus, 'cancel') }),
        lastError,
        updatedAt: new Date(),
      })
      .where(and(eq(paymentIntents.organizationId, ctx.organizationId), eq(paymentIntents.id, id)));
    return !failedAtStripe;
  });
}
