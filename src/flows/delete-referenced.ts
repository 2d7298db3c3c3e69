import { deleteTemplate } from '../modules/contract-templates/contract-templates.service.js';
import * as contractRefs from '../modules/contracts/contracts.refs.js';
import * as crewTrackingRefs from '../modules/crew-tracking/crew-tracking.refs.js';
import { deleteCrew as removeCrew } from '../modules/crew-tracking/crews.service.js';
import { hardDeleteCustomer } from '../modules/customers/customers.service.js';
import * as equipmentRefs from '../modules/equipment/equipment.refs.js';
import * as estimateRefs from '../modules/estimates/estimates.refs.js';
import * as invoiceRefs from '../modules/invoices/invoices.refs.js';
import { deleteInvoice as removeInvoice } from '../modules/invoices/invoices.service.js';
import * as jobRefs from '../modules/jobs/jobs.refs.js';
import { deleteJob as removeJob } from '../modules/jobs/jobs.service.js';
import { removeMember } from '../modules/members/members.service.js';
import { deleteProperty as removeProperty } from '../modules/properties/properties.service.js';
import * as purchaseOrderRefs from '../modules/purchase-orders/purchase-orders.refs.js';
import { deleteService as removeService } from '../modules/services/services.service.js';
import * as winterRefs from '../modules/winter-routes/winter-routes.refs.js';
import type { Ctx } from '../platform/tenancy.js';

/*
 * Deleting a row that rows of other modules name. Until drizzle/0038 the database nulled those
 * references itself (ON DELETE SET NULL); Citus refuses that on a foreign key carrying the
 * organization (docs/scaling.md), so each referencing module lets go of the row first, through
 * its own `forget…` function, in the deleting transaction, and then the owner deletes it. The
 * referencing rows keep living with a null reference, as before. A delete that fails (404, 409)
 * rolls the whole transaction back, the cleared references included.
 */

/** `DELETE /api/crews/{id}`: jobs and schedules (crew) → equipment (assignments) → winter routes → crew-tracking (the crew). */
export async function deleteCrew(ctx: Ctx, id: string): Promise<void> {
  await jobRefs.forgetCrew(ctx, id);
  await equipmentRefs.forgetCrew(ctx, id);
  await winterRefs.forgetCrew(ctx, id);
  await removeCrew(ctx, id);
}

/** `DELETE /api/properties/{id}`: jobs and schedules → invoices → estimates → contracts → properties (the property, 409 if winter visits still name it). */
export async function deleteProperty(ctx: Ctx, id: string): Promise<void> {
  await jobRefs.forgetProperty(ctx, id);
  await invoiceRefs.forgetProperty(ctx, id);
  await estimateRefs.forgetProperty(ctx, id);
  await contractRefs.forgetProperty(ctx, id);
  await removeProperty(ctx, id);
}

/** `DELETE /api/services/{id}`: invoice lines → estimate lines (each keeps its own name and price) → services. */
export async function deleteService(ctx: Ctx, id: string): Promise<void> {
  await invoiceRefs.forgetService(ctx, id);
  await estimateRefs.forgetService(ctx, id);
  await removeService(ctx, id);
}

/** `DELETE /api/members/{id}`: equipment (assignments to the member) → members (the member; not the last owner). */
export async function deleteMember(ctx: Ctx, id: string): Promise<void> {
  await equipmentRefs.forgetMember(ctx, id);
  await removeMember(ctx, id);
}

/** `DELETE /api/jobs/{id}`: equipment → estimates → purchase orders → time entries (each names the job) → jobs (the job; not a completed one). */
export async function deleteJob(ctx: Ctx, id: string): Promise<void> {
  await equipmentRefs.forgetJobs(ctx, [id]);
  await estimateRefs.forgetJobs(ctx, [id]);
  await purchaseOrderRefs.forgetJobs(ctx, [id]);
  await crewTrackingRefs.forgetJobs(ctx, [id]);
  await removeJob(ctx, id);
}

/** `DELETE /api/invoices/{id}`: jobs (billed by it: free again) → estimates → winter visits → invoices (the draft and its billing keys). */
export async function deleteInvoice(ctx: Ctx, id: string): Promise<void> {
  await jobRefs.forgetInvoices(ctx, [id]);
  await estimateRefs.forgetInvoices(ctx, [id]);
  await winterRefs.forgetInvoices(ctx, [id]);
  await removeInvoice(ctx, id);
}

/** `DELETE /api/contract-templates/{id}`: contracts (keep their text, lose the link) → contract templates. */
export async function deleteContractTemplate(ctx: Ctx, id: string): Promise<void> {
  await contractRefs.forgetTemplate(ctx, id);
  await deleteTemplate(ctx, id);
}

/**
 * `DELETE /api/customers/{id}/hard-delete`, genuine deletion: the customer's jobs and invoices go by
 * ON DELETE CASCADE, and the rows of other modules naming them let go first: equipment, purchase
 * orders, time entries and estimates (its jobs); billing keys and winter visits (its invoices).
 */
export async function deleteCustomer(ctx: Ctx, id: string): Promise<void> {
  const jobIds = await jobRefs.jobIdsOfCustomer(ctx, id);
  const invoiceIds = (await invoiceRefs.invoiceIdsOfCustomer(ctx, id)).map((r) => r.id);
  await equipmentRefs.forgetJobs(ctx, jobIds);
  await purchaseOrderRefs.forgetJobs(ctx, jobIds);
  await crewTrackingRefs.forgetJobs(ctx, jobIds);
  await estimateRefs.forgetJobs(ctx, jobIds);
  await estimateRefs.forgetInvoices(ctx, invoiceIds);
  await invoiceRefs.forgetBillingKeysOf(ctx, invoiceIds);
  await winterRefs.forgetInvoices(ctx, invoiceIds);
  await hardDeleteCustomer(ctx, id);
}
