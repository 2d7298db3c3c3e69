/**
 * The event catalog (spec Part 6.2). `*` subscribes to exactly these; customer
 * workflow events (`workflow.<name>`) are outside it and must be named explicitly.
 */
export const EVENT_CATALOG = [
  'customer.created',
  'customer.updated',
  'customer.deleted',
  'job.created',
  'job.completed',
  'job.cancelled',
  'job.status_changed',
  'invoice.created',
  'invoice.sent',
  'invoice.paid',
  'invoice.overdue',
  'invoice.voided',
  'invoice.written_off',
  'invoice.status_changed',
  'estimate.created',
  'estimate.sent',
  'estimate.accepted',
  'estimate.declined',
  'estimate.converted',
  'estimate.status_changed',
  'request.created',
  'request.converted',
  'request.declined',
  'contract.sent',
  'contract.signed',
  'payment.received',
  'payment.refunded',
  'purchase-order.created',
  'purchase-order.sent',
  'purchase-order.received',
  'purchase-order.cancelled',
  'time_entry.completed',
  'bill.created',
  'bill.approved',
  'bill.paid',
  'bill.voided',
  'bill_payment.created',
  'bill_payment.settled',
  'bill_payment.failed',
  'ledger.period_closed',
  'message.received',
  'message.delivered',
  'message.failed',
] as const;

export type CatalogEvent = (typeof EVENT_CATALOG)[number];

const CATALOG = new Set<string>(EVENT_CATALOG);
/** `workflow.` followed by a name of letters, digits, `_`, `-` and `.`. */
const WORKFLOW = /^workflow\.[a-z0-9][a-z0-9_.-]{0,99}$/i;

/** The test event sent by POST /api/webhooks/{id}/test; never subscribable. */
export const TEST_EVENT = 'webhook.test';

export function isCatalogEvent(name: string): name is CatalogEvent {
  return CATALOG.has(name);
}

export function isWorkflowEvent(name: string): boolean {
  return WORKFLOW.test(name);
}

/** A name an endpoint may subscribe to or the outbox may record. */
export function isKnownEvent(name: string): boolean {
  return isCatalogEvent(name) || isWorkflowEvent(name);
}
