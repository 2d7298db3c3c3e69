import { and, eq } from 'drizzle-orm';
import { requests } from '../../db/schema/index.js';
import type { Ctx } from '../../platform/tenancy.js';

/*
 * What other modules do to requests: a converted request names its estimate or job with a
 * composite foreign key of NO ACTION (Citus refuses SET NULL on one, docs/scaling.md), so the
 * module deleting a draft estimate or a job lets go of it here first, in its own transaction.
 */

/** Requests converted to this estimate forget it (a draft estimate is being deleted). */
export async function releaseEstimate(ctx: Ctx, estimateId: string): Promise<void> {
  await ctx.tx
    .update(requests)
    .set({ estimateId: null, updatedAt: new Date() })
    .where(and(eq(requests.organizationId, ctx.organizationId), eq(requests.estimateId, estimateId)));
}

/** Requests converted to this job forget it (the job is being deleted). */
export async function releaseJob(ctx: Ctx, jobId: string): Promise<void> {
  await ctx.tx
    .update(requests)
    .set({ jobId: null, updatedAt: new Date() })
    .where(and(eq(requests.organizationId, ctx.organizationId), eq(requests.jobId, jobId)));
}

/**
 * Erasure of a customer (decisions §4): the requests converted for it keep their history but no
 * longer the requester's name, contact, address, words or consent evidence (the address it came
 * from included).
 */
export async function anonymizeRequestsOf(ctx: Ctx, customerId: string, placeholder: string, at: Date): Promise<void> {
  await ctx.tx
    .update(requests)
    .set({
      firstName: placeholder,
      lastName: null,
      email: null,
      phone: null,
      street: placeholder,
      city: placeholder,
      state: null,
      zip: null,
      description: placeholder,
      smsConsentEvidence: null,
      sourceIp: null,
      updatedAt: at,
    })
    .where(and(eq(requests.organizationId, ctx.organizationId), eq(requests.customerId, customerId)));
}
