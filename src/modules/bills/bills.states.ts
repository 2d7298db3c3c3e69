import { canTake, stateMachine } from '../../platform/state-machine.js';

export const BILL_STATUSES = ['draft', 'awaiting_approval', 'open', 'partially_paid', 'paid', 'void'] as const;
export type BillStatus = (typeof BILL_STATUSES)[number];

export type BillTrigger =
  | 'post'
  | 'post_for_approval'
  | 'approve'
  | 'partial_payment'
  | 'full_payment'
  | 'payment_reversed_to_unpaid'
  | 'payment_reversed_to_partial'
  | 'void';

/**
 * The bill state machine (operations.md §3). A trigger missing from a row → 409
 * INVALID_STATE. `post` is chosen when the total is within settings
 * billApprovalThreshold (or none is set), `post_for_approval` when it exceeds it.
 * A failed or returned bill payment reverses its allocations: the bill goes back to
 * open (nothing paid any more) or partially_paid. Only an open bill, nothing paid,
 * can be voided; a bill that has payments is settled with its vendor instead.
 * The ledger sees a bill from the moment it is open (posted) until it is void.
 */
export const billMachine = stateMachine<BillStatus, BillTrigger>('bill', {
  draft: { post: 'open', post_for_approval: 'awaiting_approval' },
  awaiting_approval: { approve: 'open' },
  open: { partial_payment: 'partially_paid', full_payment: 'paid', void: 'void' },
  partially_paid: {
    partial_payment: 'partially_paid',
    full_payment: 'paid',
    payment_reversed_to_unpaid: 'open',
    payment_reversed_to_partial: 'partially_paid',
  },
  paid: { payment_reversed_to_unpaid: 'open', payment_reversed_to_partial: 'partially_paid' },
  void: {},
});

/** Statuses whose lines, vendor and dates may change; later only these fields. */
export const EDITABLE_BILL_STATUSES: readonly BillStatus[] = ['draft', 'awaiting_approval'];
export const LIMITED_BILL_FIELDS = ['dueDate', 'notes'] as const;

/** Whether a payment may be allocated to a bill in this status. */
export const acceptsBillPayment = (s: BillStatus) => canTake(billMachine, s, 'partial_payment');
