import type { BenchPart } from '../lib.js';
import { batchInvoicingBench } from './batch-invoicing.js';
import { billingBench } from './billing.js';
import { crewTrackingBench } from './crew-tracking.js';
import { customersBench } from './customers.js';
import { dashboardBench } from './dashboard.js';
import { jobsBench } from './jobs.js';
import { ledgerJournalBench } from './ledger-journal.js';
import { publicRequestsBench } from './public-requests.js';
import { quickbooksSyncBench } from './quickbooks-sync.js';
import { schedulesBench } from './schedules.js';
import { textsBench } from './texts.js';
import { webhooksBench } from './webhooks.js';
import { winterRoutesBench } from './winter-routes.js';

/** Every benchmark part, in the order they run. */
export const benchParts: BenchPart[] = [
  customersBench,
  jobsBench,
  schedulesBench,
  webhooksBench,
  billingBench,
  batchInvoicingBench,
  crewTrackingBench,
  winterRoutesBench,
  dashboardBench,
  ledgerJournalBench,
  quickbooksSyncBench,
  publicRequestsBench,
  textsBench,
];
