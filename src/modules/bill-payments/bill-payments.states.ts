import { stateMachine } from '../../platform/state-machine.js';

export const BILL_PAYMENT_STATUSES = ['scheduled', 'pending', 'settled', 'failed'] as const;
export type BillPaymentStatus = (typeof BILL_PAYMENT_STATUSES)[number];
export type BillPaymentTrigger = 'due' | 'settle' | 'fail';

/**
 * The bill payment state machine (operations.md §3). A payment dated after today
 * starts scheduled and the worker makes it pending on its date (`due`); the bank's
 * confirmation settles it; a failure, or a return after settling, fails it and
 * every allocation is reversed. Failed is final.
 */
export const billPaymentMachine = stateMachine<BillPaymentStatus, BillPaymentTrigger>('bill payment', {
  scheduled: { due: 'pending', fail: 'failed' },
  pending: { settle: 'settled', fail: 'failed' },
  settled: { fail: 'failed' },
  failed: {},
});
