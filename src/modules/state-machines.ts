import type { StateMachine } from '../platform/state-machine.js';
import { exportMachine } from './exports/exports.states.js';
import { mailMachine } from './mail/mail.states.js';
import { intentMachine } from './payments/payment-intents.states.js';
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
  { name: 'payment intent', doc: 'docs/billing.md', machine: intentMachine },
  { name: 'export', doc: 'docs/dashboard-exports.md', machine: exportMachine },
  { name: 'mail job', doc: 'docs/billing.md', machine: mailMachine },
  { name: 'workflow run', doc: 'docs/workflows.md', machine: workflowRunMachine },
];
