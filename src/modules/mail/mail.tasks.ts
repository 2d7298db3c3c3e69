import { randomUUID } from 'node:crypto';
import { and, asc, eq, inArray, isNull, lt, lte, or } from 'drizzle-orm';
import type { WorkerTask } from '../../background/runner.js';
import type { Database } from '../../db/client.js';
import { mailJobs } from '../../db/schema/index.js';
import { asPlatform } from '../../platform/cross-tenant.js';
import { createMailer, type MailAttachment, type Mailer } from '../../platform/mail.js';
import { type PdfSource, renderPdf } from '../../platform/pdf.js';
import { statesAccepting, take } from '../../platform/state-machine.js';
import type { Ctx } from '../../platform/tenancy.js';
import { inTenant, systemActor } from '../../platform/tenancy.js';
import type { MailDocumentType } from './mail.service.js';
import { type MailStatus, mailMachine } from './mail.states.js';

const TASK = 'mail.deliver';
const ACTOR = systemActor(TASK);
const BATCH = 20;
/** Longer than one attempt (the mailer's time-outs: 10 s connect + 20 s socket), so a live worker keeps its claim. */
const LEASE_MS = 5 * 60_000;
/** 30 s, 1 min, 2 min, … capped at 1 h: about a day of attempts before giving up. */
const FIRST_RETRY_MS = 30_000;
const MAX_RETRY_MS = 60 * 60_000;
/**
 * How the worker reads the PDF a queued mail attaches, by document type. The list names
 * document modules, so it is assembled at the top (src/modules/mail.attachments.ts) and handed in.
 */
export type PdfSources = Partial<Record<MailDocumentType, (ctx: Ctx, id: string) => Promise<PdfSource>>>;

/** Who sends (the mail server) and what they attach. */
export interface MailSenders {
  mailer: Mailer;
  pdfSources: PdfSources;
}

export const MAX_MAIL_ATTEMPTS = 30;

export const retryDelayMs = (attempts: number) =>
  Math.min(FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1), MAX_RETRY_MS);

type MailJob = typeof mailJobs.$inferSelect;

/**
 * Claims the oldest due mail job across tenants (the only cross-tenant step, through
 * asPlatform): FOR UPDATE SKIP LOCKED plus a lease, so two workers never send the same
 * job and a job whose worker died is taken again once the lease runs out. One job per
 * claim: the lease starts when that job's attempt starts and covers one send (bounded
 * by the mailer's time-outs), however many jobs the worker sends after it.
 */
async function claimOne(database: Database, now: Date): Promise<MailJob | undefined> {
  return asPlatform(database.db, async (tx) => {
    const [due] = await tx
      .select({ id: mailJobs.id, organizationId: mailJobs.organizationId })
      .from(mailJobs)
      .where(
        and(
          inArray(mailJobs.status, statesAccepting(mailMachine, 'accept')),
          lte(mailJobs.nextAttemptAt, now),
          or(isNull(mailJobs.lockedUntil), lt(mailJobs.lockedUntil, now)),
        ),
      )
      .orderBy(asc(mailJobs.nextAttemptAt))
      .limit(1)
      .for('update', { skipLocked: true });
    if (!due) return undefined;
    const [job] = await tx
      .update(mailJobs)
      .set({ lockedUntil: new Date(now.getTime() + LEASE_MS), claimToken: randomUUID(), updatedAt: now })
      .where(and(eq(mailJobs.organizationId, due.organizationId), eq(mailJobs.id, due.id)))
      .returning();
    return job;
  });
}

/**
 * The job's PDF, if it attaches one: the document is read in a short tenant transaction,
 * then drawn with none open (rendering takes a while and needs no rows).
 */
async function attachmentsOf(database: Database, pdfSources: PdfSources, job: MailJob): Promise<MailAttachment[]> {
  const read = job.attachment === 'pdf' ? pdfSources[job.documentType as MailDocumentType] : undefined;
  if (!read) return [];
  const source = await inTenant(database.db, job.organizationId, ACTOR, (ctx) => read(ctx, job.documentId));
  const { filename, content } = await renderPdf(source);
  return [{ filename, content, contentType: 'application/pdf' }];
}

/** One job: attachment, the mail server, then the outcome recorded inside the job's tenant. */
async function deliver(
  database: Database,
  { mailer, pdfSources }: MailSenders,
  job: MailJob,
  now: Date,
): Promise<void> {
  let error: string | null = null;
  try {
    const attachments = await attachmentsOf(database, pdfSources, job);
    await mailer.send({
      to: job.to,
      subject: job.subject,
      text: job.body,
      ...(job.html ? { html: job.html } : {}),
      ...(attachments.length > 0 ? { attachments } : {}),
    });
  } catch (err) {
    error = (err instanceof Error ? err.message : String(err)).slice(0, 500) || 'unknown error';
  }
  const attempts = job.attempts + 1;
  const from = job.status as MailStatus;
  const outcome =
    error === null
      ? { status: take(mailMachine, from, 'accept'), sentAt: new Date(), lastError: null }
      : attempts >= MAX_MAIL_ATTEMPTS
        ? { status: take(mailMachine, from, 'give_up'), lastError: error }
        : {
            status: take(mailMachine, from, 'retry'),
            lastError: error,
            nextAttemptAt: new Date(now.getTime() + retryDelayMs(attempts)),
          };
  await inTenant(database.db, job.organizationId, ACTOR, (ctx) =>
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
 * Sends up to `limit` mail jobs due at `now`, claiming each just before its attempt.
 * `now` is the clock (tests pass a later time to skip the backoff instead of waiting, or
 * a function to move time on between jobs). Returns how many jobs it attempted. No
 * transaction is open while a PDF is drawn or the mail server is talked to.
 */
export async function deliverDueMail(
  database: Database,
  senders: MailSenders,
  now: Date | (() => Date) = () => new Date(),
  limit = BATCH,
) {
  const clock = typeof now === 'function' ? now : () => now;
  let attempted = 0;
  while (attempted < limit) {
    const at = clock();
    const job = await claimOne(database, at);
    if (!job) break;
    await deliver(database, senders, job, at);
    attempted++;
  }
  return attempted;
}

/** The worker task; `pdfSources` is the list of documents a mail can attach (src/modules/mail.attachments.ts). */
export function createMailTask(pdfSources: PdfSources): WorkerTask {
  let mailer: Mailer | undefined;
  return {
    name: TASK,
    intervalMs: 2_000,
    run: (t) => {
      mailer ??= createMailer(t.config);
      return deliverDueMail(t.database, { mailer, pdfSources });
    },
  };
}
