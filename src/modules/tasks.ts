import type { WorkerTask } from '../background/runner.js';
import { createWebhookTask } from '../delivery/delivery.task.js';
import { scheduleBillingTask } from '../flows/bill-schedules.js';
import { billPaymentTask } from './bill-payments/bill-payments.tasks.js';
import { contractLifecycleTask } from './contracts/contracts.lifecycle.js';
import { crewTrackingTasks } from './crew-tracking/locations.tasks.js';
import { readPhonesTask } from './customers/customers.phones.js';
import { expireEstimatesTask } from './estimates/estimates.tasks.js';
import { exportTasks } from './exports/exports.tasks.js';
import { overdueInvoicesTask } from './invoices/invoices.tasks.js';
import { visitReminderTask } from './jobs/schedules/reminders.tasks.js';
import { scheduleHorizonTask } from './jobs/schedules/schedules.tasks.js';
import { createMailTask } from './mail/mail.tasks.js';
import { pdfSources } from './mail.attachments.js';
import { sendTextsTask } from './messages/messages.tasks.js';
import { paymentTasks } from './payments/payments.tasks.js';
import { quickbooksTasks } from './quickbooks/quickbooks.tasks.js';
import { createWorkflowTask } from './workflows/workflows.tasks.js';

/**
 * Every background task the worker runs (src/worker.ts, or src/server.ts with RUN_WORKER).
 * It names modules, so it lives here at the top beside index.ts, and the runner
 * (src/background/) is handed the list. Modules add theirs here.
 */
export const workerTasks: WorkerTask[] = [
  createWebhookTask(),
  overdueInvoicesTask,
  expireEstimatesTask,
  contractLifecycleTask,
  billPaymentTask,
  ...crewTrackingTasks,
  createWorkflowTask(),
  ...exportTasks,
  createMailTask(pdfSources),
  sendTextsTask,
  readPhonesTask,
  scheduleHorizonTask,
  visitReminderTask,
  scheduleBillingTask,
  ...paymentTasks,
  ...quickbooksTasks,
];
