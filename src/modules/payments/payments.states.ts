/** A payment's status follows what was refunded of it; nothing else moves it. */
export const PAYMENT_STATUSES = ['succeeded', 'partially_refunded', 'refunded'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const PAYMENT_ORIGINS = ['API', 'STRIPE'] as const;
export type PaymentOrigin = (typeof PAYMENT_ORIGINS)[number];

/** `API`: refunded through this API; `STRIPE_DASHBOARD`: refunded in Stripe and told to us by its events. */
export const REFUND_ORIGINS = ['API', 'STRIPE_DASHBOARD'] as const;
export type RefundOrigin = (typeof REFUND_ORIGINS)[number];

export function paymentStatusOf(amountCents: number, refundedCents: number): PaymentStatus {
  if (refundedCents <= 0) return 'succeeded';
  return refundedCents >= amountCents ? 'refunded' : 'partially_refunded';
}
