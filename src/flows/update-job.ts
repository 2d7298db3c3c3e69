import type { SendDeps } from '../modules/invoices/invoices.service.js';
import { getJob, type UpdateJobInput, updateJob } from '../modules/jobs/jobs.service.js';
import { scheduleBillingOf } from '../modules/jobs/schedules/schedules.billing.js';
import type { Ctx } from '../platform/tenancy.js';
import { billCompletedVisit } from './bill-jobs.js';

/**
 * `PUT|PATCH /api/jobs/{id}`: the job's change, and when it completes a visit whose
 * schedule bills per visit (operations.md §9), the visit's invoice, in the same
 * transaction: both commit or neither does. Made once: the visit can be completed only
 * once, and billing it marks it billed conditionally (bill-jobs.ts).
 *
 * jobs (the change, its activity and job.* events) → jobs (the visit's schedule's
 * billing) → invoices (billCompletedVisit: the draft, or sent when autoSend, with its
 * ledger entry, events and mail) → jobs (the job again, now with invoiceId).
 */
export async function updateJobAndBillVisit(ctx: Ctx, id: string, input: UpdateJobInput, deps: SendDeps) {
  const job = await updateJob(ctx, id, input);
  // A status given and accepted is a move taken now: `completed` is final, so it happens once.
  if (input.status !== 'completed' || job.scheduleId === null) return job;
  const billing = await scheduleBillingOf(ctx, job.scheduleId);
  if (billing?.mode !== 'per_visit') return job;
  const invoice = await billCompletedVisit(ctx, job.id, { autoSend: billing.autoSend }, deps);
  return invoice ? getJob(ctx, job.id) : job;
}
