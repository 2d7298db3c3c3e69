import { stateMachine } from '../../platform/state-machine.js';
import type { RunStatus } from './workflows.schemas.js';

/**
 * A workflow run (workflows.tasks.ts): each finished action keeps it pending (`advance`)
 * until the last, which ends it `succeeded`, or `failed` when any action failed; a run
 * that crashed its worker MAX_ATTEMPTS times is given up (`give_up`).
 */
export const workflowRunMachine = stateMachine<RunStatus, 'advance' | 'succeed' | 'fail' | 'give_up'>('workflow run', {
  pending: { advance: 'pending', succeed: 'succeeded', fail: 'failed', give_up: 'failed' },
  succeeded: {},
  failed: {},
});
