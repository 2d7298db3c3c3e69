import { stateMachine } from '../../../platform/state-machine.js';

export const SCHEDULE_STATUSES = ['active', 'paused', 'ended'] as const;
export type ScheduleStatus = (typeof SCHEDULE_STATUSES)[number];
export type ScheduleTrigger = 'pause' | 'resume' | 'end';

/**
 * A recurring schedule (operations.md §9): only `active` has visits made ahead;
 * `paused` keeps the rule (a contract's schedule waits here until the contract is
 * active); `ended` is final.
 */
export const scheduleMachine = stateMachine<ScheduleStatus, ScheduleTrigger>('schedule', {
  active: { pause: 'paused', end: 'ended' },
  paused: { resume: 'active', end: 'ended' },
  ended: {},
});
