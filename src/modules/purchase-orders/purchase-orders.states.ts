import type { CatalogEvent } from '../../platform/events/catalog.js';
import { stateMachine } from '../../platform/state-machine.js';

export const PO_STATUSES = ['draft', 'sent', 'received', 'cancelled'] as const;
export type PoStatus = (typeof PO_STATUSES)[number];
export type PoTrigger = 'send' | 'receive' | 'cancel';

/**
 * The purchase order state machine (operations.md §3): draft → sent → received,
 * draft | sent → cancelled. Received and cancelled are final. Only a draft may be
 * edited or deleted.
 */
export const poMachine = stateMachine<PoStatus, PoTrigger>('purchase order', {
  draft: { send: 'sent', cancel: 'cancelled' },
  sent: { receive: 'received', cancel: 'cancelled' },
  received: {},
  cancelled: {},
});

export const PO_TRIGGER_EVENT: Record<PoTrigger, CatalogEvent> = {
  send: 'purchase-order.sent',
  receive: 'purchase-order.received',
  cancel: 'purchase-order.cancelled',
};
