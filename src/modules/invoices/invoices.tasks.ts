import type { WorkerTask } from '../../background/runner.js';
import { invoices } from '../../db/schema/index.js';
import { sweepOf } from '../billing/billing.tasks.js';
import { markInvoicesOverdue } from './invoices.service.js';
import { invoiceMachine } from './invoices.transitions.js';

/** sent | partially_paid invoices whose dueDate is before today (org timezone) → overdue. */
export const sweepOverdueInvoices = sweepOf(
  'invoices.overdue',
  invoices,
  invoices.dueDate,
  invoiceMachine,
  'overdue',
  markInvoicesOverdue,
);

export const overdueInvoicesTask: WorkerTask = {
  name: 'invoices.overdue',
  intervalMs: 60_000,
  run: (t) => sweepOverdueInvoices(t.database),
};
