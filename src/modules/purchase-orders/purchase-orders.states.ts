import type { CatalogEvent } from '../../delivery/catalog.js';
import { invalidState } from '../../platform/errors.js';

export const PO_STATUSES = ['draft', 'sent', 'received', 'cancelled'] as const;
export type PoStatus = (typeof PO_STATUSES)[number];
export type PoTrigger = 'send' | 'receive' | 'cancel';

/**
 * The purchase order state machine (operations.md §3): draft → sent → received,
 * draft | sent → cancelled. Received and cancelled are final. Only a draft may be
 * edited or deleted.
 */
export const PO_TRANSITIONS: Record<PoStatus, Partial<Record<PoTrigger, PoStatus>>> = {
  draft: { send: 'sent', cancel: 'cancelled' },
  sent: { receive: 'received', cancel: 'cancelled' },
  received: {},
  cancelled: {},
};

export const PO_TRIGGER_EVENT: Record<PoTrigger, CatalogEvent> = {
  send: 'purchase-order.sent',
  receive: 'purchase-order.received',
  cancel: 'purchase-order.cancelled',
};

export function nextPoStatus(from: PoStatus, trigger: PoTrigger): PoStatus {
  const to = PO_TRANSITIONS[from][trigger];
  if (!to) throw invalidState(`Cannot ${trigger} a purchase order that is ${from}`);
  return to;
}
