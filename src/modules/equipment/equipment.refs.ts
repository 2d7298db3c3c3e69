import { equipmentAssignments } from '../../db/schema/index.js';
import { clearReferences } from '../../platform/owned-rows.js';
import type { Ctx } from '../../platform/tenancy.js';

/*
 * What ON DELETE SET NULL did before drizzle/0038 (refused by Citus): an assignment outlives the
 * member, crew or job it named, with a null reference. Called by the flows that delete those rows
 * (src/flows/delete-*.ts), before the delete, in its transaction.
 */
export const forgetMember = (ctx: Ctx, memberId: string): Promise<void> =>
  clearReferences(ctx, equipmentAssignments, equipmentAssignments.memberId, [memberId]);
export const forgetCrew = (ctx: Ctx, crewId: string): Promise<void> =>
  clearReferences(ctx, equipmentAssignments, equipmentAssignments.crewId, [crewId]);
export const forgetJobs = (ctx: Ctx, jobIds: string[]): Promise<void> =>
  clearReferences(ctx, equipmentAssignments, equipmentAssignments.jobId, jobIds);
