import { contracts } from '../../db/schema/index.js';
import { clearReferences } from '../../platform/owned-rows.js';
import type { Ctx } from '../../platform/tenancy.js';

/*
 * What ON DELETE SET NULL did before drizzle/0038 (refused by Citus): a contract outlives the
 * property or template it named (it keeps its text, a snapshot), with a null reference. Called
 * by the flows that delete those rows (src/flows/delete-*.ts), before the delete.
 */
export const forgetProperty = (ctx: Ctx, propertyId: string): Promise<void> =>
  clearReferences(ctx, contracts, contracts.propertyId, [propertyId]);
export const forgetTemplate = (ctx: Ctx, templateId: string): Promise<void> =>
  clearReferences(ctx, contracts, contracts.templateId, [templateId]);
