import type { CatalogEvent } from '../../platform/events/catalog.js';
import { stateMachine } from '../../platform/state-machine.js';

export const ESTIMATE_STATUSES = ['draft', 'sent', 'viewed', 'approved', 'declined', 'expired', 'converted'] as const;
export type EstimateStatus = (typeof ESTIMATE_STATUSES)[number];

export type EstimateTrigger = 'send' | 'view' | 'approve' | 'decline' | 'expire' | 'convert' | 'convert_to_job';

/**
 * The estimate state machine; the service consults it for every move, the
 * worker's expiry and the customer's first view included, only through
 * `take`/`canTake`/`statesAccepting` (409 INVALID_STATE for a trigger a status
 * does not list). A re-send keeps sent or viewed; a second view keeps viewed
 * without a move; conversion is possible from every status but converted.
 * `convert_to_job` (POST /convert-to-job) takes an approved estimate only and keeps it
 * approved: the job is billed later, so the estimate itself never becomes an invoice.
 * docs/billing.md prints it (`npm run docs:states`).
 */
export const estimateMachine = stateMachine<EstimateStatus, EstimateTrigger>('estimate', {
  draft: { send: 'sent', convert: 'converted' },
  sent: {
    send: 'sent',
    view: 'viewed',
    approve: 'approved',
    decline: 'declined',
    expire: 'expired',
    convert: 'converted',
  },
  viewed: { send: 'viewed', approve: 'approved', decline: 'declined', expire: 'expired', convert: 'converted' },
  approved: { convert: 'converted', convert_to_job: 'approved' },
  declined: { convert: 'converted' },
  expired: { convert: 'converted' },
  converted: {},
});

/**
 * Events per trigger: `specific` fires on every use of the trigger,
 * estimate.status_changed when the status moves and `statusChanged` is true.
 * Viewing and expiry emit nothing (spec 3.2, rule 6.2.3).
 */
export const ESTIMATE_TRIGGER_EVENTS: Record<
  EstimateTrigger,
  { specific: CatalogEvent | null; statusChanged: boolean }
> = {
  send: { specific: 'estimate.sent', statusChanged: true },
  view: { specific: null, statusChanged: false },
  approve: { specific: 'estimate.accepted', statusChanged: true },
  decline: { specific: 'estimate.declined', statusChanged: true },
  expire: { specific: null, statusChanged: false },
  convert: { specific: 'estimate.converted', statusChanged: true },
  convert_to_job: { specific: null, statusChanged: false },
};

/** Fully editable only while draft; sent and viewed accept these fields; later states nothing. */
export const LIMITED_EDIT_FIELDS = ['expirationDate', 'notes'] as const;
export const LIMITED_EDIT_STATES: readonly EstimateStatus[] = ['sent', 'viewed'];
