/**
 * The contract state machine (decisions §4), consulted by every operation:
 *  send (draft → sent; sent → sent re-sends a fresh link), portal sign (sent → signed),
 *  worker (signed → active once startDate ≤ today; active → expired after endDate),
 *  cancel (any non-final state → canceled). expired and canceled are final.
 */
export const CONTRACT_STATUSES = ['draft', 'sent', 'signed', 'active', 'expired', 'canceled'] as const;
export type ContractStatus = (typeof CONTRACT_STATUSES)[number];

export const CONTRACT_TRANSITIONS: Readonly<Record<ContractStatus, readonly ContractStatus[]>> = {
  draft: ['sent', 'canceled'],
  sent: ['sent', 'signed', 'canceled'],
  signed: ['active', 'canceled'],
  active: ['expired', 'canceled'],
  expired: [],
  canceled: [],
};

export function canMoveContract(from: ContractStatus, to: ContractStatus): boolean {
  return CONTRACT_TRANSITIONS[from].includes(to);
}

/** Only drafts are edited; a sent or signed contract changes by a new contract (spec 3.4). */
export const EDITABLE_CONTRACT_STATUSES: readonly ContractStatus[] = ['draft'];

/** Signed or active contracts are amended (spec 3.4); the amendment is a new draft contract. */
export const AMENDABLE_CONTRACT_STATUSES: readonly ContractStatus[] = ['signed', 'active'];
