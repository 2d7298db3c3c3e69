import { stateMachine } from '../../../platform/state-machine.js';

/**
 * A payment intent's status mirrors Stripe's PaymentIntent, reduced to what the office
 * needs (requires_confirmation/requires_action count as requires_payment_method: the
 * customer still has to finish paying).
 */
export const INTENT_STATUSES = ['requires_payment_method', 'processing', 'succeeded', 'canceled'] as const;
export type IntentStatus = (typeof INTENT_STATUSES)[number];

export const INTENT_SOURCES = ['API', 'PORTAL'] as const;
export type IntentSource = (typeof INTENT_SOURCES)[number];

/**
 * Moves, each made by a Stripe event (or by the cancel route). `succeed` starts from
 * canceled too: money Stripe took is never dropped, whatever order events arrive in.
 */
export type IntentAction = 'process' | 'fail' | 'succeed' | 'cancel';
export const intentMachine = stateMachine<IntentStatus, IntentAction>('payment intent', {
  requires_payment_method: {
    process: 'processing',
    fail: 'requires_payment_method',
    succeed: 'succeeded',
    cancel: 'canceled',
  },
  processing: { fail: 'requires_payment_method', succeed: 'succeeded', cancel: 'canceled' },
  succeeded: {},
  canceled: { succeed: 'succeeded' },
});

/** Intents the customer can still pay (or is paying): the invoice holds at most one such portal intent. */
export const OPEN_INTENT_STATUSES = [
  'requires_payment_method',
  'processing',
] as const satisfies readonly IntentStatus[];

/** The invoice statuses a card payment can be started on (a draft is not sent yet; paid, void, written off are closed). */
export const PAYABLE_INVOICE_STATUSES: ReadonlySet<string> = new Set(['sent', 'partially_paid', 'overdue']);

/** Stripe's PaymentIntent status → ours. */
export function intentStatusOfStripe(status: string): IntentStatus {
  switch (status) {
    case 'processing':
      return 'processing';
    case 'succeeded':
      return 'succeeded';
    case 'canceled':
      return 'canceled';
    default:
      return 'requires_payment_method';
  }
}

/** Deposit origins: the office's cash/check runs, and Stripe payouts. */
export const DEPOSIT_ORIGINS = ['MANUAL', 'STRIPE_PAYOUT'] as const;
export type DepositOrigin = (typeof DEPOSIT_ORIGINS)[number];

/** The methods a manual deposit takes (card money reaches the bank through payouts). */
export const DEPOSITABLE_METHODS: ReadonlySet<string> = new Set(['cash', 'check']);
