import type { Ctx } from '../../platform/tenancy.js';
import type { CustomerRow } from '../customers/customers.refs.js';
import { type LastEmail, type MailDocumentType, queueMail } from '../mail/mail.service.js';

/** Every address a document goes to: the customer's email and additionalEmails, once each. */
export function recipientsOf(customer: CustomerRow): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of [customer.email, ...(customer.additionalEmails ?? [])]) {
    const address = raw?.trim();
    if (!address || seen.has(address.toLowerCase())) continue;
    seen.add(address.toLowerCase());
    out.push(address);
  }
  return out;
}

/**
 * Queues the mail of a document link (with the document as a PDF attachment, rendered
 * by the worker) in the sending transaction: the send commits at once and the worker
 * delivers, retrying while the mail server refuses (src/modules/mail).
 * A customer without any address gets no mail; the send still succeeds and the
 * office shares the returned portalUrl by hand (emailedTo is then empty).
 */
export async function queueDocumentMail(
  ctx: Ctx,
  customer: CustomerRow,
  message: {
    documentType: MailDocumentType;
    documentId: string;
    subject: string;
    lines: string[];
    attachPdf?: boolean;
  },
): Promise<{ emailedTo: string[]; lastEmail: LastEmail | null }> {
  const to = recipientsOf(customer);
  if (to.length === 0) return { emailedTo: to, lastEmail: null };
  const greeting = `Hello ${[customer.firstName, customer.lastName].filter(Boolean).join(' ')},`;
  const lastEmail = await queueMail(ctx, {
    documentType: message.documentType,
    documentId: message.documentId,
    to,
    subject: message.subject,
    text: [greeting, '', ...message.lines, ''].join('\n'),
    attachPdf: message.attachPdf ?? false,
  });
  return { emailedTo: to, lastEmail };
}
