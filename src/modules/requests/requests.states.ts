import { stateMachine } from '../../platform/state-machine.js';

export const REQUEST_STATUSES = ['new', 'converted', 'declined', 'archived'] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

/** Each a route: `POST /api/requests/{id}/convert|decline|archive`. */
export type RequestAction = 'convert' | 'decline' | 'archive';

/**
 * A request from the public (operations.md §12): staff convert it (to an estimate or a job) or
 * decline it, once; any request may be archived out of the way. Converting twice → 409.
 */
export const requestMachine = stateMachine<RequestStatus, RequestAction>('request', {
  new: { convert: 'converted', decline: 'declined', archive: 'archived' },
  converted: { archive: 'archived' },
  declined: { archive: 'archived' },
  archived: {},
});
