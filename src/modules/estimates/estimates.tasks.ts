import type { WorkerTask } from '../../background/runner.js';
import { estimates } from '../../db/schema/index.js';
import { sweepOf } from '../billing/billing.tasks.js';
import { expireEstimates } from './estimates.service.js';
import { estimateMachine } from './estimates.transitions.js';

/** sent | viewed estimates whose expirationDate is before today (org timezone) → expired, no event. */
export const sweepExpiredEstimates = sweepOf(
  'estimates.expire',
  estimates,
  estimates.expirationDate,
  estimateMachine,
  'expire',
  expireEstimates,
);

export const expireEstimatesTask: WorkerTask = {
  name: 'estimates.expire',
  intervalMs: 60_000,
  run: (t) => sweepExpiredEstimates(t.database),
};
