import { stateMachine } from '../../platform/state-machine.js';

export const RUN_STATUSES = ['dispatched', 'in_progress', 'completed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/**
 * A run's status is derived from its visits (operations.md §6): `in_progress` after its
 * first recorded visit, `completed` when no visit is pending. Visits never go back to
 * pending, so a run never moves back either.
 */
export const runMachine = stateMachine<RunStatus, 'start' | 'complete'>('winter run', {
  dispatched: { start: 'in_progress', complete: 'completed' },
  in_progress: { start: 'in_progress', complete: 'completed' },
  // A visit of a completed run recorded again (serviced ↔ skipped) leaves it completed.
  completed: { complete: 'completed' },
});

/** The run status after a visit was recorded, given how many visits are still pending. */
export const runActionFor = (pending: number) => (pending === 0 ? ('complete' as const) : ('start' as const));

export const VISIT_STATUSES = ['pending', 'serviced', 'skipped'] as const;
export type VisitStatus = (typeof VISIT_STATUSES)[number];

/**
 * Visit moves. `billed` is a state of the machine only (the REST status stays `serviced`,
 * with `billed: true`): a billed visit cannot be recorded again (409 INVALID_STATE).
 */
export const visitMachine = stateMachine<VisitStatus | 'billed', 'service' | 'skip' | 'bill'>('visit', {
  pending: { service: 'serviced', skip: 'skipped' },
  serviced: { service: 'serviced', skip: 'skipped', bill: 'billed' },
  skipped: { service: 'serviced', skip: 'skipped' },
  billed: {},
});

export const visitState = (v: { status: string; invoiceId: string | null }) =>
  v.invoiceId ? ('billed' as const) : (v.status as VisitStatus);
