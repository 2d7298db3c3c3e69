import type { StateMachine } from '../platform/state-machine.js';
import { billPaymentMachine } from './bill-payments/bill-payments.states.js';
import { billMachine } from './bills/bills.states.js';
import { contractMachine } from './contracts/contracts.states.js';
import { customerMachine } from './customers/customers.states.js';
import { equipmentMachine } from './equipment/equipment.states.js';
import { estimateMachine } from './estimates/estimates.transitions.js';
import { exportMachine } from './exports/exports.states.js';
import { invoiceMachine } from './invoices/invoices.transitions.js';
import { jobMachine } from './jobs/jobs.states.js';
import { scheduleMachine } from './jobs/schedules/schedules.states.js';
import { mailMachine } from './mail/mail.states.js';
import { messageMachine } from './messages/messages.states.js';
import { intentMachine } from './payments/intents/payment-intents.states.js';
import { paymentMachine } from './payments/payments.states.js';
import { poMachine } from './purchase-orders/purchase-orders.states.js';
import { requestMachine } from './requests/requests.states.js';
import { runMachine, visitMachine } from './winter-routes/winter-routes.states.js';
import { workflowRunMachine } from './workflows/workflows.states.js';

/**
 * Every state machine of the product and the doc page that prints its table between
 * `<!-- state-table: <name> -->` and `<!-- /state-table -->`. `npm run docs:states`
 * rewrites those blocks from the code; test/platform/state-tables.test.ts fails when a
 * page is stale or a machine is missing from this list.
 */
export const STATE_MACHINES: ReadonlyArray<{ name: string; doc: string; machine: StateMachine<string, string> }> = [
  { name: 'winter run', doc: 'docs/winter-routes.md', machine: runMachine },
  { name: 'winter visit', doc: 'docs/winter-routes.md', machine: visitMachine },
  { name: 'payment', doc: 'docs/billing.md', machine: paymentMachine },
  { name: 'invoice', doc: 'docs/billing.md', machine: invoiceMachine },
  { name: 'estimate', doc: 'docs/billing.md', machine: estimateMachine },
  { name: 'payment intent', doc: 'docs/billing.md', machine: intentMachine },
  { name: 'customer', doc: 'docs/customers.md', machine: customerMachine },
  { name: 'equipment', doc: 'docs/crew-equipment.md', machine: equipmentMachine },
  { name: 'job', doc: 'docs/jobs-contracts.md', machine: jobMachine },
  { name: 'schedule', doc: 'docs/jobs-contracts.md', machine: scheduleMachine },
  { name: 'contract', doc: 'docs/jobs-contracts.md', machine: contractMachine },
  { name: 'purchase order', doc: 'docs/purchasing.md', machine: poMachine },
  { name: 'bill', doc: 'docs/purchasing.md', machine: billMachine },
  { name: 'bill payment', doc: 'docs/purchasing.md', machine: billPaymentMachine },
  { name: 'export', doc: 'docs/dashboard-exports.md', machine: exportMachine },
  { name: 'mail job', doc: 'docs/billing.md', machine: mailMachine },
  { name: 'workflow run', doc: 'docs/workflows.md', machine: workflowRunMachine },
  { name: 'request', doc: 'docs/requests.md', machine: requestMachine },
  { name: 'text message', doc: 'docs/messages.md', machine: messageMachine },
];
