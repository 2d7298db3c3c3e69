import type { Config } from '../config.js';
import { sendEstimate } from '../modules/estimates/estimates.service.js';
import { sendInvoice } from '../modules/invoices/invoices.service.js';
import { queueAutomaticText } from '../modules/messages/messages.service.js';
import { twilioDeps } from '../modules/messages/messages.twilio.js';
import { getOrgSettings } from '../modules/settings/settings.service.js';
import { formatMoney } from '../platform/money.js';
import type { Ctx } from '../platform/tenancy.js';

/** How a document reaches its customer (operations.md §10): mail, a text with the portal link, or both. */
export type SendChannel = 'email' | 'sms';

/** What a send answers beyond the document's view: the text made, if one was asked for. */
export interface Texted {
  textedTo: string | null;
  textMessageId: string | null;
}

/**
 * The text of a send: one `invoice_link` / `estimate_link` text through the messages outbox
 * (sent at most once by the worker, held by the quiet hours like every automatic text). A customer
 * who cannot be texted (no consent, no valid mobile, texting off) makes it 409 naming what is
 * missing, thrown in the send's transaction: the status move, the portal link, the mail and the
 * events already written roll back with it, so a refused send writes and sends nothing.
 */
async function textLink(
  ctx: Ctx,
  config: Config,
  text: {
    customerId: string;
    body: string;
    kind: 'invoice_link' | 'estimate_link';
    invoiceId?: string;
    estimateId?: string;
  },
): Promise<Texted> {
  const message = await queueAutomaticText(ctx, twilioDeps(config), { ...text, quiet: true, whenBlocked: 'refuse' });
  if (!message) throw new Error('document texts have no dedupe key, so one is always made');
  return { textedTo: message.to, textMessageId: message.id };
}

/**
 * `POST /api/invoices/{id}/send {channels}`: invoices (the send: status, ledger, invoice.sent, the
 * portal link, the mail when `email` is asked) → settings (the sender's name, the currency) →
 * messages (the link texted when `sms` is asked, or 409 and nothing at all).
 */
export async function sendInvoiceOn(ctx: Ctx, id: string, channels: SendChannel[], config: Config) {
  const sent = await sendInvoice(ctx, id, { baseUrl: config.baseUrl }, { email: channels.includes('email') });
  if (!channels.includes('sms')) return { ...sent, textedTo: null, textMessageId: null };
  const settings = await getOrgSettings(ctx);
  const texted = await textLink(ctx, config, {
    customerId: sent.customerId,
    kind: 'invoice_link',
    invoiceId: sent.id,
    body: `${settings.companyName ?? settings.name}: invoice ${sent.invoiceNumber} for ${formatMoney(sent.total, settings.currency)}, due ${sent.dueDate}: ${sent.portalUrl}`,
  });
  return { ...sent, ...texted };
}

/**
 * `POST /api/estimates/{id}/send {channels}`: estimates (the send: status, estimate.sent, the
 * portal link, the mail when `email` is asked) → settings → messages (the link texted when `sms`
 * is asked, or 409 and nothing at all).
 */
export async function sendEstimateOn(ctx: Ctx, id: string, channels: SendChannel[], config: Config) {
  const sent = await sendEstimate(ctx, id, { baseUrl: config.baseUrl }, { email: channels.includes('email') });
  if (!channels.includes('sms')) return { ...sent, textedTo: null, textMessageId: null };
  const settings = await getOrgSettings(ctx);
  const texted = await textLink(ctx, config, {
    customerId: sent.customerId,
    kind: 'estimate_link',
    estimateId: sent.id,
    body: `${settings.companyName ?? settings.name}: estimate ${sent.estimateNumber} for ${formatMoney(sent.total, settings.currency)}, valid until ${sent.expirationDate}: ${sent.portalUrl}`,
  });
  return { ...sent, ...texted };
}
