import { AppError } from '../../platform/errors.js';
import type { MailAttachment, Mailer } from '../../platform/mail.js';
import type { CustomerRow } from '../customers/customers.refs.js';

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
 * Mails a document link (and the document as a PDF attachment). Called last inside the sending transaction: if the mail
 * server refuses, the transaction rolls back and the document is not marked sent.
 * A customer without any address gets no mail; the send still succeeds and the
 * office shares the returned portalUrl by hand (emailedTo is then empty).
 */
export async function mailDocumentLink(
  mailer: Mailer,
  customer: CustomerRow,
  message: { subject: string; lines: string[]; attachments?: MailAttachment[] },
): Promise<string[]> {
  const to = recipientsOf(customer);
  if (to.length === 0) return to;
  const greeting = `Hello ${[customer.firstName, customer.lastName].filter(Boolean).join(' ')},`;
  try {
    await mailer.send({
      to,
      subject: message.subject,
      text: [greeting, '', ...message.lines, ''].join('\n'),
      ...(message.attachments ? { attachments: message.attachments } : {}),
    });
  } catch {
    throw new AppError('SERVICE_UNAVAILABLE', 'The mail server did not accept the message; nothing was changed');
  }
  return to;
}
