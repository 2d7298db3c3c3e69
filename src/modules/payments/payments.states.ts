import { stateMachine } from '../../platform/state-machine.js';

export const PAYMENT_STATUSES = ['succeeded', 'partially_refunded', 'refunded'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];
export type PaymentTrigger = 'partial_refund' | 'full_refund';

/**
 * A payment's status follows what was refunded of it; nothing else moves it. Each refund
 * is a trigger (refundTriggerOf), so the table is what refuses a refund of a payment
 * refunded in full (the service already answers that with 400 on `amount`, before the table).
 */
export const paymentMachine = stateMachine<PaymentStatus, PaymentTrigger>('payment', {
  succeeded: { partial_refund: 'partially_refunded', full_refund: 'refunded' },
  partially_refunded: { partial_refund: 'partially_refunded', full_refund: 'refunded' },
  refunded: {},
});

export const PAYMENT_ORIGINS = ['API', 'STRIPE'] as const;
export type PaymentOrigin = (typeof PAYMENT_ORIGINS)[number];

/** `API`: refunded through this API; `STRIPE_DASHBOARD`: refunded in Stripe and told to us by its events. */
export const REFUND_ORIGINS = ['API', 'STRIPE_DASHBOARD'] as const;
export type RefundOrigin = (typeof REFUND_ORIGINS)[number];

/** The trigger of a refund that brings the payment's refunded total to `refundedCents`. */
export const refundTriggerOf = (amountCents: number, refundedCents: number): PaymentTrigger =>
  refundedCents >= amountCents ? 'full_refund' : 'partial_refund';
