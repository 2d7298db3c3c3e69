import { invalidState } from '../../platform/errors.js';

export const BILL_PAYMENT_STATUSES = ['scheduled', 'pending', 'settled', 'failed'] as const;
export type BillPaymentStatus = (typeof BILL_PAYMENT_STATUSES)[number];
export type BillPaymentTrigger = 'due' | 'settle' | 'fail';

/**
 * The bill payment state machine (operations.md §3). A payment dated after today
 * starts scheduled and the worker makes it pending on its date (`due`); the bank's
 * confirmation settles it; a failure, or a return after settling, fails it and
 * every allocation is reversed. Failed is final.
 */
export const BILL_PAYMENT_TRANSITIONS: Record<
  BillPaymentStatus,
  Partial<Record<BillPaymentTrigger, BillPaymentStatus>>
> = {
  scheduled: { due: 'pending', fail: 'failed' },
  pending: { settle: 'settled', fail: 'failed' },
  settled: { fail: 'failed' },
  failed: {},
};

export function nextBillPaymentStatus(from: BillPaymentStatus, trigger: BillPaymentTrigger): BillPaymentStatus {
  const to = BILL_PAYMENT_TRANSITIONS[from][trigger];
  if (!to) throw invalidState(`Cannot ${trigger} a bill payment that is ${from}`);
  return to;
}
