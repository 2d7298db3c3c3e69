import { stateMachine } from '../../platform/state-machine.js';

export const JOB_STATUSES = ['draft', 'scheduled', 'in_progress', 'on_hold', 'completed', 'canceled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export type JobTrigger = 'publish' | 'schedule' | 'start' | 'hold' | 'complete' | 'cancel';

/**
 * The job state machine (decisions §4). `draft` leaves only through publish (POST
 * /publish); every other move is a PUT {status}, whose status names the trigger (see
 * JOB_TRIGGER_TO). completed and canceled are final. Services consult this table, nothing else.
 */
export const jobMachine = stateMachine<JobStatus, JobTrigger>('job', {
  draft: { publish: 'scheduled' },
  scheduled: { start: 'in_progress', hold: 'on_hold', complete: 'completed', cancel: 'canceled' },
  in_progress: { complete: 'completed', hold: 'on_hold', cancel: 'canceled' },
  on_hold: { schedule: 'scheduled', start: 'in_progress', cancel: 'canceled' },
  completed: {},
  canceled: {},
});

/** The trigger a PUT {status} takes: the status asked for names it (draft is never asked for). */
export const JOB_TRIGGER_TO: Readonly<Record<Exclude<JobStatus, 'draft'>, Exclude<JobTrigger, 'publish'>>> = {
  scheduled: 'schedule',
  in_progress: 'start',
  on_hold: 'hold',
  completed: 'complete',
  canceled: 'cancel',
};

/** The specific catalog event of a transition, besides `job.status_changed`. */
export function specificJobEvent(to: JobStatus): 'job.completed' | 'job.cancelled' | undefined {
  if (to === 'completed') return 'job.completed';
  if (to === 'canceled') return 'job.cancelled';
  return undefined;
}
