import { invalidState } from '../../platform/errors.js';
import type { CatalogEvent } from '../../webhooks/catalog.js';

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
  | 'write_off';

/**
 * The invoice state machine: from a status, each trigger it accepts and where it
 * leads. A trigger missing from a row is refused with 409 INVALID_STATE. The
 * service consults only this table; docs/billing.md prints it.
 *
 * - send keeps the status once the invoice is out (a resend emails it again).
 * - a partial payment on an overdue invoice keeps it overdue: it is still past due,
 *   and moving it to partially_paid would only have the sweep flag it overdue again.
 * - moving an overdue invoice's dueDate to today or later (PUT) reopens it: back to
 *   sent, or partially_paid when something was paid already.
 */
export const INVOICE_TRANSITIONS: Record<InvoiceStatus, Partial<Record<InvoiceTrigger, InvoiceStatus>>> = {
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
  },
  overdue: {
    send: 'overdue',
    partial_payment: 'overdue',
    full_payment: 'paid',
    due_date_extended: 'sent',
    due_date_extended_after_payment: 'partially_paid',
    void: 'void',
    write_off: 'written_off',
  },
  paid: { void: 'void' },
  void: {},
  written_off: { void: 'void' },
};

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
};

/** Only a draft is fully editable or deletable; later, only these fields may change. */
export const LIMITED_EDIT_FIELDS = ['dueDate', 'notes'] as const;

export function nextInvoiceStatus(from: InvoiceStatus, trigger: InvoiceTrigger): InvoiceStatus {
  const to = INVOICE_TRANSITIONS[from][trigger];
  if (!to) throw invalidState(`Cannot ${trigger.replace('_', ' ')} an invoice that is ${from.replace('_', ' ')}`);
  return to;
}

/** Which states accept a payment at all (any row with a payment trigger). */
export const acceptsPayment = (s: InvoiceStatus) => INVOICE_TRANSITIONS[s].partial_payment !== undefined;
