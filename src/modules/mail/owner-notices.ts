import { mailHtml } from '../../platform/html.js';
import type { Ctx } from '../../platform/tenancy.js';
import { ownerEmails } from '../members/members.refs.js';
import { getOrgSettings } from '../settings/settings.service.js';
import { queueMail } from './mail.service.js';

/** What a customer did through their link that the office should hear of at once. */
export interface OwnerNotice {
  /** The document acted on (mail_jobs' document_id; the type is `owner_notice`, so it never becomes the document's `lastEmail`). */
  documentId: string;
  subject: string;
  lines: string[];
  /** Where the office sees it: a console or API URL. */
  link?: { label: string; url: string };
  /**
   * Sent whatever `notifyOwners` says, as the mail of that document type: a new request from the
   * public booking form (operations.md §12: the owners get a mail for each one; it is how a lead
   * reaches them). `notifyOwners` covers what customers do through their links.
   */
  always?: { documentType: 'request' };
}

/**
 * Mails the organization's owners in the caller's transaction (so a rolled-back approval
 * mails nobody), unless the setting `notifyOwners` is off (and the notice is not `always`).
 * Sent by the mail worker.
 */
export async function mailOwners(ctx: Ctx, notice: OwnerNotice): Promise<void> {
  if (!notice.always && !(await getOrgSettings(ctx)).notifyOwners) return;
  const to = await ownerEmails(ctx);
  if (to.length === 0) return;
  const footer = notice.always
    ? 'You get these mails as an owner.'
    : 'You get these mails as an owner; turn them off with the setting notifyOwners.';
  await queueMail(ctx, {
    documentType: notice.always?.documentType ?? 'owner_notice',
    documentId: notice.documentId,
    to,
    subject: notice.subject,
    text: [...notice.lines, ...(notice.link ? ['', `${notice.link.label}: ${notice.link.url}`] : []), '', footer].join(
      '\n',
    ),
    html: mailHtml({ heading: notice.subject, paragraphs: notice.lines, action: notice.link, footer }),
  });
}
