import { estimateForJob, recordEstimateJob } from '../modules/estimates/estimates.service.js';
import { settledJobLines } from '../modules/jobs/jobs.lines.js';
import { createPricedJob } from '../modules/jobs/jobs.service.js';
import type { Ctx } from '../platform/tenancy.js';

export interface ConvertToJobInput {
  scheduledDate: string;
  startTime?: string | undefined;
  assignedTo?: string[] | undefined;
  crewId?: string | undefined;
}

/**
 * `POST /api/estimates/{id}/convert-to-job` (operations.md §9): a job with the approved
 * estimate's lines at their approved prices, its customer, property and notes.
 *
 * estimates (the estimate, locked: approved and not yet converted, else 409) → jobs (the
 * job, checked exactly as POST /api/jobs checks one: crew, members, start time, property;
 * job.created) → estimates (the estimate records jobId and stays approved).
 */
export async function convertEstimateToJob(ctx: Ctx, id: string, input: ConvertToJobInput) {
  const { estimate, lines } = await estimateForJob(ctx, id);
  const job = await createPricedJob(
    ctx,
    {
      customerId: estimate.customerId,
      propertyId: estimate.propertyId ?? undefined,
      scheduledDate: input.scheduledDate,
      startTime: input.startTime,
      assignedTo: input.assignedTo,
      crewId: input.crewId,
      notes: estimate.notes ?? undefined,
    },
    settledJobLines(lines),
  );
  return { estimate: await recordEstimateJob(ctx, id, job.id), job };
}
