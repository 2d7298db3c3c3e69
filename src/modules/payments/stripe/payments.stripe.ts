import type Stripe from 'stripe';
import type { Db } from '../../../db/client.js';
import { today } from '../../../platform/dates.js';
import { AppError, invalidField, notFound } from '../../../platform/errors.js';
import type { SecretBox } from '../../../platform/secrets.js';
import { type Ctx, withTenant } from '../../../platform/tenancy.js';
import { findRow } from '../../invoices/invoices.service.js';
import { storedSettingsOf } from '../../organizations/organizations.refs.js';
import { getOrgSettings } from '../../settings/settings.service.js';
import { moveIntentByEvent } from '../intents/payment-intents.service.js';
import { paymentByProcessorId, receivePayment, refundPayment, refundRecorded } from '../payments.service.js';
import { stripeAmountToCents, stripeSdk } from './stripe-client.js';

/** Stripe's own default: a signature older than five minutes is a replay, refused. */
export const STRIPE_TOLERANCE_SECONDS = 300;

export type StripeOutcome = 'recorded' | 'duplicate' | 'ignored';

const badEvent = (message: string) => new AppError('VALIDATION_FAILED', message);

/**
 * Cross-tenant lookup: Stripe calls one URL per organization and carries no
 * credential of ours, so the organization (and its sealed signing secret) is found
 * by the id in the URL before any tenant is known. Only the secret leaves this
 * function; everything after the signature check runs inside that tenant.
 */
export async function stripeSecretOfOrganization(db: Db, box: SecretBox, organizationId: string) {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(organizationId)) return null;
  // The URL names the tenant, so the read runs inside it (RLS shows that organization or nothing).
  const settings = await withTenant(db, organizationId, (tx) => storedSettingsOf(tx, organizationId));
  const sealed = (settings as { stripeWebhookSecretSealed?: string | null } | null | undefined)
    ?.stripeWebhookSecretSealed;
  if (!sealed) return null;
  try {
    return box.open(sealed);
  } catch {
    // Sealed under another AUTH_SECRET: as good as unset until an admin sets it again.
    return null;
  }
}

/**
 * Checks the `Stripe-Signature` header over the raw body with Stripe's own library
 * (HMAC-SHA256, timestamp within the tolerance) and parses the event. Every failure,
 * including an organization with no secret and a body that is not JSON, is a 400
 * before anything is read or written.
 */
export function verifiedStripeEvent(rawBody: string, signature: string | undefined, secret: string | null) {
  if (!secret) throw badEvent('Stripe events are not configured for this organization (settings stripeWebhookSecret)');
  if (!signature) throw badEvent('Missing Stripe-Signature header');
  try {
    return stripeSdk().webhooks.constructEvent(rawBody, signature, secret, STRIPE_TOLERANCE_SECONDS);
  } catch (err) {
    if (err instanceof stripeSdk().errors.StripeSignatureVerificationError) {
      throw badEvent(`Stripe signature verification failed: ${err.message}`);
    }
    throw badEvent('Body is not a valid Stripe event (JSON)');
  }
}

export function checkCurrency(currency: unknown, orgCurrency: string, field: string): string {
  if (typeof currency !== 'string' || currency.toUpperCase() !== orgCurrency.toUpperCase()) {
    throw invalidField(
      field,
      `${String(currency).toUpperCase()} differs from the organization's currency ${orgCurrency}; nothing was recorded`,
    );
  }
  return orgCurrency;
}

export const idOf = (ref: unknown): string | undefined =>
  typeof ref === 'string'
    ? ref
    : typeof (ref as { id?: unknown })?.id === 'string'
      ? (ref as { id: string }).id
      : undefined;

/**
 * `payment_intent.succeeded`: the payment, once per intent (the invoice lock, then the
 * processor id check, then the unique index), and the intent row moved to succeeded.
 */
export async function paymentIntentSucceeded(
  ctx: Ctx,
  intent: Stripe.PaymentIntent,
  created: number,
): Promise<StripeOutcome> {
  const settings = await getOrgSettings(ctx);
  checkCurrency(intent.currency, settings.currency, 'data.object.currency');
  const invoiceId = intent.metadata?.invoiceId;
  if (typeof invoiceId !== 'string' || invoiceId === '') {
    throw invalidField('data.object.metadata.invoiceId', 'is required: set it when creating the PaymentIntent');
  }
  const amountCents = stripeAmountToCents(
    intent.amount_received ?? intent.amount,
    intent.currency,
    'data.object.amount_received',
  );
  // The invoice lock comes first, so a concurrent replay of the same event waits here
  // and then finds the payment the first delivery recorded.
  const invoice = await findRow(ctx, invoiceId, true).catch((err: unknown) => {
    if (err instanceof AppError && err.code === 'NOT_FOUND') {
      throw invalidField('data.object.metadata.invoiceId', 'names no invoice of this organization');
    }
    throw err;
  });
  const existing = await paymentByProcessorId(ctx, intent.id);
  if (existing) {
    const moved = await moveIntentByEvent(ctx, intent.id, 'succeed', created, { paymentId: existing.id });
    return moved ? 'recorded' : 'duplicate';
  }
  const recorded = await receivePayment(ctx, invoice, {
    amountCents,
    paymentDate: today(settings.timezone, new Date(created * 1000)),
    method: 'card',
    reference: null,
    origin: 'STRIPE',
    processorPaymentId: intent.id,
    keepExcess: true,
  });
  await moveIntentByEvent(ctx, intent.id, 'succeed', created, { paymentId: recorded.payment.id, lastError: null });
  return 'recorded';
}

/** Refunds count once per Stripe refund id, whichever event (charge.refunded, refund.created) brings them. */
export async function stripeRefunds(
  ctx: Ctx,
  intentId: string | undefined,
  refunds: Stripe.Refund[],
  field: string,
): Promise<StripeOutcome> {
  if (!intentId) throw invalidField(field, 'is required to find the payment');
  const settings = await getOrgSettings(ctx);
  let outcome: StripeOutcome = refunds.length > 0 ? 'duplicate' : 'ignored';
  for (const refund of refunds) {
    // A failed or canceled refund gave nothing back.
    if (refund.status === 'failed' || refund.status === 'canceled') continue;
    checkCurrency(refund.currency, settings.currency, 'refund.currency');
    const amountCents = stripeAmountToCents(refund.amount, refund.currency, 'refund.amount');
    const payment = await paymentByProcessorId(ctx, intentId);
    if (!payment) {
      // Delivered before its payment_intent.succeeded: a non-2xx answer makes Stripe
      // deliver it again later, when the payment exists (nothing is written now).
      throw new AppError(
        'CONFLICT',
        `No payment recorded yet for ${intentId}; Stripe retries this event once payment_intent.succeeded has arrived`,
      );
    }
    // Locks the invoice (as refundPayment does) before the duplicate check, so a
    // concurrent delivery of the same refund waits and then sees it recorded.
    const invoice = await findRow(ctx, payment.invoiceId, true).catch(() => {
      throw notFound('Invoice');
    });
    if (await refundRecorded(ctx, refund.id)) continue;
    await refundPayment(ctx, invoice, payment.id, {
      amountCents,
      reason: refund.reason ?? null,
      origin: 'STRIPE_DASHBOARD',
      processorRefundId: refund.id,
    });
    outcome = 'recorded';
  }
  return outcome;
}
