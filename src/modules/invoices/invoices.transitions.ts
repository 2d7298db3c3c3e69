import type { CatalogEvent } from '../../platform/events/catalog.js';
import { canTake, stateMachine } from '../../platform/state-machine.js';

export const INVOICE_STATUSES = ['draft', 'sent', 'partially_paid', 'paid', 'overdue', 'void', 'written_off'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

export type InvoiceTrigger =
  | 'send'
  | 'partial_payment'
  | 'full_payment'
  | 'overdue'
  | 'due_date_extended'
  | 'due_date_extended_after_payment'
  | 'void'
  | 'write_off'
  | 'partial_refund'
  | 'full_refund'
  | 'partial_refund_past_due'
  | 'full_refund_past_due';

const REFUNDS_REOPEN = {
  partial_refund: 'partially_paid',
  full_refund: 'sent',
  partial_refund_past_due: 'overdue',
  full_refund_past_due: 'overdue',
} as const;
const refundsKeep = <S extends InvoiceStatus>(status: S) => ({
  partial_refund: status,
  full_refund: status,
  partial_refund_past_due: status,
  full_refund_past_due: status,
});

/**
 * The invoice state machine: from a status, each trigger it accepts and where it
 * leads. A trigger missing from a row is refused with 409 INVALID_STATE. The
 * services consult it only through `take`/`canTake`/`next`/`statesAccepting`;
 * docs/billing.md prints it (`npm run docs:states`).
 *
 * - send keeps the status once the invoice is out (a resend emails it again).
 * - a partial payment on an overdue invoice keeps it overdue: it is still past due,
 *   and moving it to partially_paid would only have the sweep flag it overdue again.
 * - moving an overdue invoice's dueDate to today or later (PUT) reopens it: back to
 *   sent, or partially_paid when something was paid already.
 * - a refund that takes money back from the invoice reopens it: partially_paid while
 *   something stays paid (partial), sent when nothing does (full), overdue either way
 *   once the due date has passed (`_past_due`). A void or written-off invoice keeps
 *   its status: only its amountPaid drops.
 */
export const invoiceMachine = stateMachine<InvoiceStatus, InvoiceTrigger>('invoice', {
  draft: { send: 'sent', partial_payment: 'partially_paid', full_payment: 'paid', void: 'void' },
  sent: {
    send: 'sent',
    partial_payment: 'partially_paid',
    full_payment: 'paid',
    overdue: 'overdue',
    void: 'void',
    write_off: 'written_off',
  },
  partially_paid: {
    send: 'partially_paid',
    partial_payment: 'partially_paid',
    full_payment: 'paid',
    overdue: 'overdue',
    void: 'void',
    write_off: 'written_off',
    ...REFUNDS_REOPEN,
  },
  overdue: {
    send: 'overdue',
    partial_payment: 'overdue',
    full_payment: 'paid',
    due_date_extended: 'sent',
    due_date_extended_after_payment: 'partially_paid',
    void: 'void',
    write_off: 'written_off',
    ...refundsKeep('overdue'),
  },
  paid: { void: 'void', ...REFUNDS_REOPEN },
  void: refundsKeep('void'),
  written_off: { void: 'void', ...refundsKeep('written_off') },
});

/** The specific event of each trigger; `invoice.status_changed` fires as well whenever the status moves. */
export const TRIGGER_EVENT: Record<InvoiceTrigger, CatalogEvent | null> = {
  send: 'invoice.sent',
  partial_payment: null,
  full_payment: 'invoice.paid',
  overdue: 'invoice.overdue',
  due_date_extended: null,
  due_date_extended_after_payment: null,
  void: 'invoice.voided',
  write_off: 'invoice.written_off',
  partial_refund: null,
  full_refund: null,
  partial_refund_past_due: null,
  full_refund_past_due: null,
};

/** Only a draft is fully editable or deletable; later, only these fields may change. */
export const LIMITED_EDIT_FIELDS = ['dueDate', 'notes'] as const;

/** Which states accept a payment at all (any row with a payment trigger). */
export const acceptsPayment = (s: InvoiceStatus) => canTake(invoiceMachine, s, 'partial_payment');

/** The trigger of a refund that takes money back from an invoice. */
export function refundTrigger(amountPaidAfterCents: number, pastDue: boolean): InvoiceTrigger {
  const kind = amountPaidAfterCents > 0 ? 'partial_refund' : 'full_refund';
  return pastDue ? `${kind}_past_due` : kind;
}
