import type Stripe from 'stripe';
import type { Ctx } from '../../../platform/tenancy.js';
import { payoutFailed, payoutIntentIds, planPayout, recordPayout } from '../deposits/deposits.service.js';
import { moveIntentByEvent, type TenantRunner } from '../intents/payment-intents.service.js';
import type { IntentAction } from '../intents/payment-intents.states.js';
import { idOf, paymentIntentSucceeded, type StripeOutcome, stripeRefunds } from './payments.stripe.js';
import type { StripeDeps } from './stripe-client.js';

/**
 * One handler per Stripe event type. `run` opens a transaction in the organization;
 * a handler that must ask Stripe does so between transactions, never inside one.
 */
export type StripeEventHandler = (event: Stripe.Event, run: TenantRunner, deps: StripeDeps) => Promise<StripeOutcome>;

/** A handler whose whole work is one transaction: the event is recorded, or nothing. */
const inOneTransaction =
  (fn: (ctx: Ctx, event: Stripe.Event) => Promise<StripeOutcome>): StripeEventHandler =>
  (event, run) =>
    run((ctx) => fn(ctx, event));

/** An intent event that only moves our intent (no money): unknown intents (made elsewhere) are ignored. */
const moveIntent = (action: IntentAction): StripeEventHandler =>
  inOneTransaction(async (ctx, event) => {
    const intent = event.data.object as Stripe.PaymentIntent;
    const lastError = action === 'fail' ? (intent.last_payment_error?.message ?? 'The payment failed') : undefined;
    const moved = await moveIntentByEvent(ctx, intent.id, action, event.created, {
      ...(lastError !== undefined ? { lastError } : {}),
    });
    return moved ? 'recorded' : 'duplicate';
  });

/**
 * `payout.paid`: the settings are read and the payout checked in a short transaction,
 * Stripe's balance transactions of the payout are paged outside any transaction, and
 * one short transaction records the deposit with the payments it matched.
 */
const payoutPaid: StripeEventHandler = async (event, run, deps) => {
  const payout = event.data.object as Stripe.Payout;
  const plan = await run((ctx) => planPayout(ctx, payout, deps));
  if (plan.done) return plan.done;
  const intentIds = await payoutIntentIds(payout.id, plan.key, deps.api);
  return run((ctx) => recordPayout(ctx, payout, plan, intentIds));
};

/**
 * THE table of Stripe events handled (event type → handler). A type not listed is
 * acknowledged (200, outcome ignored) and changes nothing: Stripe sends every type an
 * endpoint subscribes to, and a new one must never make it retry forever.
 */
export const STRIPE_EVENT_HANDLERS: ReadonlyMap<string, StripeEventHandler> = new Map<string, StripeEventHandler>([
  [
    'payment_intent.succeeded',
    inOneTransaction((ctx, event) =>
      paymentIntentSucceeded(ctx, event.data.object as Stripe.PaymentIntent, event.created),
    ),
  ],
  ['payment_intent.processing', moveIntent('process')],
  ['payment_intent.payment_failed', moveIntent('fail')],
  ['payment_intent.canceled', moveIntent('cancel')],
  [
    'charge.refunded',
    inOneTransaction((ctx, event) => {
      const charge = event.data.object as Stripe.Charge;
      return stripeRefunds(ctx, idOf(charge.payment_intent), charge.refunds?.data ?? [], 'data.object.payment_intent');
    }),
  ],
  [
    'refund.created',
    inOneTransaction((ctx, event) => {
      const refund = event.data.object as Stripe.Refund;
      return stripeRefunds(ctx, idOf(refund.payment_intent), [refund], 'data.object.payment_intent');
    }),
  ],
  ['payout.paid', payoutPaid],
  ['payout.failed', inOneTransaction((ctx, event) => payoutFailed(ctx, event.data.object as Stripe.Payout))],
]);

/** Applies a verified event in its organization (`run`): the whole event is recorded, or nothing. */
export async function applyStripeEvent(
  event: Stripe.Event,
  run: TenantRunner,
  deps: StripeDeps,
): Promise<StripeOutcome> {
  const handler = STRIPE_EVENT_HANDLERS.get(event.type);
  return handler ? handler(event, run, deps) : 'ignored';
}

/** The handled types, for the endpoint's documentation. */
export const HANDLED_STRIPE_EVENTS = [...STRIPE_EVENT_HANDLERS.keys()];
