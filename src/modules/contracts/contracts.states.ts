import { stateMachine } from '../../platform/state-machine.js';

export const CONTRACT_STATUSES = ['draft', 'sent', 'signed', 'active', 'expired', 'canceled'] as const;
export type ContractStatus = (typeof CONTRACT_STATUSES)[number];

export type ContractTrigger = 'edit' | 'send' | 'sign' | 'activate' | 'expire' | 'amend' | 'cancel';

/**
 * The contract state machine (decisions §4), consulted by every operation:
 *  edit (drafts only; a sent or signed contract changes by a new contract, spec 3.4),
 *  send (draft → sent; sent → sent re-sends a fresh link), portal sign (sent → signed),
 *  worker (signed → active once startDate ≤ today; active → expired after endDate),
 *  amend (signed or active; the amendment is a new draft and the original keeps its state),
 *  cancel (any non-final state → canceled). expired and canceled are final.
 */
export const contractMachine = stateMachine<ContractStatus, ContractTrigger>('contract', {
  draft: { edit: 'draft', send: 'sent', cancel: 'canceled' },
  sent: { send: 'sent', sign: 'signed', cancel: 'canceled' },
  signed: { activate: 'active', amend: 'signed', cancel: 'canceled' },
  active: { expire: 'expired', amend: 'active', cancel: 'canceled' },
  expired: {},
  canceled: {},
});
