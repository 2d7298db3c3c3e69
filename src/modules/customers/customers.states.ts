import { stateMachine } from '../../platform/state-machine.js';

export const CUSTOMER_STATUSES = ['active', 'inactive'] as const;
export type CustomerStatus = (typeof CUSTOMER_STATUSES)[number];

/** The two actions, each a route (`POST /api/customers/{id}/deactivate|reactivate`). */
export const CUSTOMER_ACTIONS = ['deactivate', 'reactivate'] as const;
export type CustomerAction = (typeof CUSTOMER_ACTIONS)[number];

/**
 * A customer's status: inactive customers stay readable but are meant for no new work.
 * Soft delete and anonymization are not statuses (a deleted or anonymized customer keeps
 * the status it had).
 */
export const customerMachine = stateMachine<CustomerStatus, CustomerAction>('customer', {
  active: { deactivate: 'inactive' },
  inactive: { reactivate: 'active' },
});
