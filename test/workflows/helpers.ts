import { and, asc, eq } from 'drizzle-orm';
import { customers, jobs, mailJobs, workflowRuns } from '../../src/db/schema/index.js';
import { processWorkflows, type WorkflowTaskOptions } from '../../src/modules/workflows/workflows.tasks.js';
import type { Harness, TestUser } from '../harness.js';

/**
 * Runs the workflows worker's passes until nothing is left (bounded): what the
 * worker does on its own, without timers, so tests stay deterministic.
 */
export async function drain(h: Harness, opts: WorkflowTaskOptions = {}) {
  for (let i = 0; i < 50; i++) {
    if ((await processWorkflows(h.database, { leaseMs: 0, ...opts })) === 0) return;
  }
  throw new Error('workflows did not settle');
}

export async function runsOf(h: Harness, workflowId: string) {
  return h.admin.db
    .select()
    .from(workflowRuns)
    .where(eq(workflowRuns.workflowId, workflowId))
    .orderBy(asc(workflowRuns.createdAt));
}

export async function jobsOf(h: Harness, organizationId: string, customerId: string) {
  return h.admin.db
    .select()
    .from(jobs)
    .where(and(eq(jobs.organizationId, organizationId), eq(jobs.customerId, customerId)))
    .orderBy(asc(jobs.createdAt));
}

export async function tagsOf(h: Harness, customerId: string) {
  const [row] = await h.admin.db.select({ tags: customers.tags }).from(customers).where(eq(customers.id, customerId));
  return row?.tags ?? [];
}

export async function defineWorkflow(owner: TestUser, body: Record<string, unknown>) {
  const res = await owner.call('POST', '/api/workflows', body);
  if (res.statusCode !== 201) throw new Error(`workflow create failed: ${res.statusCode} ${res.body}`);
  return res.json().data as { id: string; name: string };
}

/** The mail workflow email actions queued for the organization, oldest first. */
export async function workflowMails(h: Harness, organizationId: string) {
  const rows = await h.admin.db
    .select({ to: mailJobs.to, subject: mailJobs.subject, text: mailJobs.body })
    .from(mailJobs)
    .where(and(eq(mailJobs.organizationId, organizationId), eq(mailJobs.documentType, 'workflow')))
    .orderBy(asc(mailJobs.createdAt), asc(mailJobs.id));
  return rows;
}
