import { billPaymentTask } from '../modules/bill-payments/bill-payments.tasks.js';
import { billingTasks } from '../modules/billing/billing.tasks.js';
import { contractLifecycleTask } from '../modules/contracts/contracts.lifecycle.js';
import { crewTrackingTasks } from '../modules/crew-tracking/locations.tasks.js';
import { createWebhookTask } from '../webhooks/worker.js';
import type { WorkerTask } from './runner.js';

/** Every background task the worker runs. Modules add theirs here. */
export const workerTasks: WorkerTask[] = [
  createWebhookTask(),
  ...billingTasks,
  contractLifecycleTask,
  billPaymentTask,
  ...crewTrackingTasks,
];
