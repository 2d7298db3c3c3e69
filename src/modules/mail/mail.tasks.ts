import { randomUUID } from 'node:crypto';
import { and, asc, eq, inArray, isNull, lt, lte, or } from 'drizzle-orm';
import type { WorkerTask } from '../../background/runner.js';
import type { Database } from '../../db/client.js';
import { mailJobs } from '../../db/schema/index.js';
import { asPlatform } from '../../platform/cross-tenant.js';
import { createMailer, type MailAttachment, type Mailer } from '../../platform/mail.js';
import { inTenant, systemActor } from '../../platform/tenancy.js';
import { pdfRenderers } from './mail.attachments.js';
import type { MailDocumentType } from './mail.service.js';

const TASK = 'mail.deliver';
const BATCH = 20;
/** Longer than the mailer's own time-outs (10 s connect + 20 s socket), so a live worker keeps its claim. */
const LEASE_MS = 5 * 60_000;
/** 30 s, 1 min, 2 min, … capped at 1 h: about a day of attempts before giving up. */
const FIRST_RETRY_MS = 30_000;
const MAX_RETRY_MS = 60 * 60_000;
export const MAX_MAIL_ATTEMPTS = 30;

export const retryDelayMs = (attempts: number) =>
  Math.min(FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1), MAX_RETRY_MS);

type MailJob = typeof mailJobs.$inferSelect;

/**
 * Claims due mail jobs across tenants (the only cross-tenant step, through asPlatform):
 * FOR UPDATE SKIP LOCKED plus a lease, so two workers never send the same job and a
 * job whose worker died is taken again once the lease runs out.
 */
async function claimDue(database: Database, now: Date, limit: number): Promise<MailJob[]> {
  const token = randomUUID();
  return asPlatform(database.db, async (tx) => {
    const due = await tx
      .select({ id: mailJobs.id })
      .from(mailJobs)
      .where(
        and(
          eq(mailJobs.status, 'pending'),
          lte(mailJobs.nextAttemptAt, now),
          or(isNull(mailJobs.lockedUntil), lt(mailJobs.lockedUntil, now)),
        ),
      )
      .orderBy(asc(mailJobs.nextAttemptAt))
      .limit(limit)
      .for('update', { skipLocked: true });
    if (due.length === 0) return [];
    return tx
      .update(mailJobs)
      .set({ lockedUntil: new Date(now.getTime() + LEASE_MS), claimToken: token, updatedAt: now })
      .where(
        inArray(
          mailJobs.id,
          due.map((d) => d.id),
        ),
      )
      .returning();
  });
}

/** One job: attachment, the mail server, then the outcome recorded inside the job's tenant. */
async function deliver(database: Database, mailer: Mailer, job: MailJob, now: Date): Promise<void> {
  const actor = systemActor(TASK);
  let error: string | null = null;
  try {
    const attachments: MailAttachment[] = [];
    const render = job.attachment === 'pdf' ? pdfRenderers[job.documentType as MailDocumentType] : undefined;
    if (render) {
      const pdf = await inTenant(database.db, job.organizationId, actor, (ctx) => render(ctx, job.documentId));
      attachments.push({ filename: pdf.filename, content: pdf.content, contentType: 'application/pdf' });
    }
    await mailer.send({
      to: job.to,
      subject: job.subject,
      text: job.body,
      ...(attachments.length > 0 ? { attachments } : {}),
    });
  } catch (err) {
    error = (err instanceof Error ? err.message : String(err)).slice(0, 500) || 'unknown error';
  }
  const attempts = job.attempts + 1;
  const outcome =
    error === null
      ? { status: 'sent', sentAt: new Date(), lastError: null }
      : attempts >= MAX_MAIL_ATTEMPTS
        ? { status: 'failed', lastError: error }
        : { status: 'pending', lastError: error, nextAttemptAt: new Date(now.getTime() + retryDelayMs(attempts)) };
  await inTenant(database.db, job.organizationId, actor, (ctx) =>
    ctx.tx
      .update(mailJobs)
      .set({ ...outcome, attempts, lockedUntil: null, claimToken: null, updatedAt: new Date() })
      .where(
        and(
          eq(mailJobs.organizationId, ctx.organizationId),
          eq(mailJobs.id, job.id),
          eq(mailJobs.claimToken, job.claimToken ?? ''),
        ),
      ),
  );
}

/**
 * Sends the mail jobs due at `now` (tests pass a later `now` to skip the backoff
 * instead of waiting). Returns how many jobs it attempted. No transaction is open
 * while the mail server is talked to.
 */
export async function deliverDueMail(database: Database, mailer: Mailer, now = new Date(), limit = BATCH) {
  const jobs = await claimDue(database, now, limit);
  for (const job of jobs) await deliver(database, mailer, job, now);
  return jobs.length;
}

let workerMailer: Mailer | undefined;

export const mailTask: WorkerTask = {
  name: TASK,
  intervalMs: 2_000,
  run: (t) => {
    workerMailer ??= createMailer(t.config);
    return deliverDueMail(t.database, workerMailer);
  },
};
