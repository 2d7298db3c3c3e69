import { and, desc, eq, inArray } from 'drizzle-orm';
import { mailJobs } from '../../db/schema/index.js';
import { newId } from '../../platform/ids.js';
import type { Ctx } from '../../platform/tenancy.js';
import type { MailStatus } from './mail.states.js';

/*
 * THE way a change sends mail: `queueMail` writes a mail job in the change's own
 * transaction (so a rolled-back change mails nobody and a committed one is never
 * forgotten); the worker task `mail.deliver` (mail.tasks.ts) sends it with retries
 * and exponential backoff and records the outcome on the job. Nothing talks to the
 * mail server inside a request.
 */

/** What a mail is about; `workflow`: an email action of a workflow run (its workflow's id). */
export type MailDocumentType =
  | 'invoice'
  | 'estimate'
  | 'contract'
  | 'purchase_order'
  | 'invitation'
  | 'workflow'
  | 'job'
  // A user's own account (a password reset): documentId is the user's id.
  | 'account'
  // The owners told of a customer's action (an estimate approved, a contract signed): mail/owner-notices.ts.
  | 'owner_notice'
  // A request from the public (the owners are told of it): documentId is the request's id.
  | 'request';
export type { MailStatus };

export interface QueuedMail {
  documentType: MailDocumentType;
  documentId: string;
  to: string[];
  subject: string;
  text: string;
  /** An HTML part beside the text (escape every value put into it: `platform/html.ts`). */
  html?: string;
  /** Attach the document's PDF, rendered by the worker when it sends (src/modules/mail.attachments.ts). */
  attachPdf?: boolean;
}

/** What a document shows of its last mail. */
export interface LastEmail {
  status: MailStatus;
  to: string[];
  sentAt: Date | null;
  error: string | null;
}

type MailJobRow = typeof mailJobs.$inferSelect;

const lastEmailView = (r: MailJobRow): LastEmail => ({
  status: r.status as MailStatus,
  to: r.to,
  sentAt: r.sentAt,
  error: r.lastError,
});

/** Queues one mail in the caller's transaction; returns what the document now shows as its last mail. */
export async function queueMail(ctx: Ctx, mail: QueuedMail): Promise<LastEmail> {
  const [row] = await ctx.tx
    .insert(mailJobs)
    .values({
      id: newId('mlj'),
      organizationId: ctx.organizationId,
      documentType: mail.documentType,
      documentId: mail.documentId,
      to: mail.to,
      subject: mail.subject,
      body: mail.text,
      html: mail.html ?? null,
      attachment: mail.attachPdf ? 'pdf' : null,
    })
    .returning();
  return lastEmailView(row as MailJobRow);
}

/** The latest mail of each document (null when none was ever queued), in one query. */
export async function lastEmailsOf(
  ctx: Ctx,
  documentType: MailDocumentType,
  ids: string[],
): Promise<Map<string, LastEmail | null>> {
  const out = new Map<string, LastEmail | null>(ids.map((id) => [id, null]));
  if (ids.length === 0) return out;
  const rows = await ctx.tx
    .selectDistinctOn([mailJobs.documentId])
    .from(mailJobs)
    .where(
      and(
        eq(mailJobs.organizationId, ctx.organizationId),
        eq(mailJobs.documentType, documentType),
        inArray(mailJobs.documentId, ids),
      ),
    )
    .orderBy(mailJobs.documentId, desc(mailJobs.createdAt), desc(mailJobs.id));
  for (const r of rows) out.set(r.documentId, lastEmailView(r));
  return out;
}

export async function lastEmailOf(ctx: Ctx, documentType: MailDocumentType, id: string): Promise<LastEmail | null> {
  return (await lastEmailsOf(ctx, documentType, [id])).get(id) ?? null;
}
