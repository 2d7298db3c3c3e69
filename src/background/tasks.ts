import { createWebhookTask } from '../delivery/delivery.task.js';
import { billPaymentTask } from '../modules/bill-payments/bill-payments.tasks.js';
import { billingTasks } from '../modules/billing/billing.tasks.js';
import { contractLifecycleTask } from '../modules/contracts/contracts.lifecycle.js';
import { crewTrackingTasks } from '../modules/crew-tracking/locations.tasks.js';
import { exportTasks } from '../modules/exports/exports.tasks.js';
import { visitReminderTask } from '../modules/jobs/schedules/reminders.tasks.js';
import { scheduleHorizonTask } from '../modules/jobs/schedules/schedules.tasks.js';
import { mailTask } from '../modules/mail/mail.tasks.js';
import { paymentTasks } from '../modules/payments/payments.tasks.js';
import { createWorkflowTask } from '../modules/workflows/workflows.tasks.js';
import type { WorkerTask } from './runner.js';

/** Every background task the worker runs. Modules add theirs here. */
export const workerTasks: WorkerTask[] = [
  createWebhookTask(),
  ...billingTasks,
  contractLifecycleTask,
  billPaymentTask,
  ...crewTrackingTasks,
  createWorkflowTask(),
  ...exportTasks,
  mailTask,
  scheduleHorizonTask,
  visitReminderTask,
  ...paymentTasks,
];
