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
}

/**
 * Mails the organization's owners in the caller's transaction (so a rolled-back approval
 * mails nobody), unless the setting `notifyOwners` is off. Sent by the mail worker.
 */
export async function mailOwners(ctx: Ctx, notice: OwnerNotice): Promise<void> {
  const settings = await getOrgSettings(ctx);
  if (!settings.notifyOwners) return;
  const to = await ownerEmails(ctx);
  if (to.length === 0) return;
  const footer = 'You get these mails as an owner; turn them off with the setting notifyOwners.';
  await queueMail(ctx, {
    documentType: 'owner_notice',
    documentId: notice.documentId,
    to,
    subject: notice.subject,
    text: [...notice.lines, ...(notice.link ? ['', `${notice.link.label}: ${notice.link.url}`] : []), '', footer].join(
      '\n',
    ),
    html: mailHtml({ heading: notice.subject, paragraphs: notice.lines, action: notice.link, footer }),
  });
}
