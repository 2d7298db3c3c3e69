import type Stripe from 'stripe';
import type { Ctx } from '../../platform/tenancy.js';
import { getOrgSettings } from '../settings/settings.service.js';
import { payoutFailed, recordPayout } from './deposits.service.js';
import { moveIntentByEvent } from './payment-intents.service.js';
import type { IntentAction } from './payment-intents.states.js';
import { checkCurrency, idOf, paymentIntentSucceeded, type StripeOutcome, stripeRefunds } from './payments.stripe.js';
import type { StripeDeps } from './stripe-client.js';

/** One handler per Stripe event type; each runs inside the organization's transaction. */
export type StripeEventHandler = (ctx: Ctx, event: Stripe.Event, deps: StripeDeps) => Promise<StripeOutcome>;

/** An intent event that only moves our intent (no money): unknown intents (made elsewhere) are ignored. */
const moveIntent =
  (action: IntentAction): StripeEventHandler =>
  async (ctx, event) => {
    const intent = event.data.object as Stripe.PaymentIntent;
    const lastError = action === 'fail' ? (intent.last_payment_error?.message ?? 'The payment failed') : undefined;
    const moved = await moveIntentByEvent(ctx, intent.id, action, event.created, {
      ...(lastError !== undefined ? { lastError } : {}),
    });
    return moved ? 'recorded' : 'duplicate';
  };

/** The organization's Stripe key for calls an event needs (payout matching); null when not set. */
const keyOf = (deps: StripeDeps) => async (ctx: Ctx) => {
  const settings = await getOrgSettings(ctx);
  if (!settings.stripeSecretKeySealed) return null;
  try {
    return deps.box.open(settings.stripeSecretKeySealed);
  } catch {
    return null;
  }
};

/**
 * THE table of Stripe events handled (event type → handler). A type not listed is
 * acknowledged (200, outcome ignored) and changes nothing: Stripe sends every type an
 * endpoint subscribes to, and a new one must never make it retry forever.
 */
export const STRIPE_EVENT_HANDLERS: ReadonlyMap<string, StripeEventHandler> = new Map<string, StripeEventHandler>([
  [
    'payment_intent.succeeded',
    (ctx, event) => paymentIntentSucceeded(ctx, event.data.object as Stripe.PaymentIntent, event.created),
  ],
  ['payment_intent.processing', moveIntent('process')],
  ['payment_intent.payment_failed', moveIntent('fail')],
  ['payment_intent.canceled', moveIntent('cancel')],
  [
    'charge.refunded',
    (ctx, event) => {
      const charge = event.data.object as Stripe.Charge;
      return stripeRefunds(ctx, idOf(charge.payment_intent), charge.refunds?.data ?? [], 'data.object.payment_intent');
    },
  ],
  [
    'refund.created',
    (ctx, event) => {
      const refund = event.data.object as Stripe.Refund;
      return stripeRefunds(ctx, idOf(refund.payment_intent), [refund], 'data.object.payment_intent');
    },
  ],
  [
    'payout.paid',
    async (ctx, event, deps) => {
      const { currency } = await getOrgSettings(ctx);
      return recordPayout(ctx, event.data.object as Stripe.Payout, deps, keyOf(deps), (c) =>
        checkCurrency(c, currency, 'data.object.currency'),
      );
    },
  ],
  ['payout.failed', (ctx, event) => payoutFailed(ctx, event.data.object as Stripe.Payout)],
]);

/** Runs inside the organization's transaction: the whole event is recorded, or nothing. */
export async function applyStripeEvent(ctx: Ctx, event: Stripe.Event, deps: StripeDeps): Promise<StripeOutcome> {
  const handler = STRIPE_EVENT_HANDLERS.get(event.type);
  return handler ? handler(ctx, event, deps) : 'ignored';
}

/** The handled types, for the endpoint's documentation. */
export const HANDLED_STRIPE_EVENTS = [...STRIPE_EVENT_HANDLERS.keys()];
