/**
 * The job state machine (decisions §4). `draft` leaves only through publish;
 * completed and canceled are final. Services consult this table, nothing else.
 */
export const JOB_STATUSES = ['draft', 'scheduled', 'in_progress', 'on_hold', 'completed', 'canceled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Statuses a PUT {status} may move to, by current status. */
export const JOB_TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  draft: [],
  scheduled: ['in_progress', 'on_hold', 'completed', 'canceled'],
  in_progress: ['completed', 'on_hold', 'canceled'],
  on_hold: ['scheduled', 'in_progress', 'canceled'],
  completed: [],
  canceled: [],
};

export const FINAL_JOB_STATUSES: readonly JobStatus[] = ['completed', 'canceled'];

export function canMoveJob(from: JobStatus, to: JobStatus): boolean {
  return JOB_TRANSITIONS[from].includes(to);
}

/** The specific catalog event of a transition, besides `job.status_changed`. */
export function specificJobEvent(to: JobStatus): 'job.completed' | 'job.cancelled' | undefined {
  if (to === 'completed') return 'job.completed';
  if (to === 'canceled') return 'job.cancelled';
  return undefined;
}
