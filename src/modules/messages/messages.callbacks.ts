import { invalidField } from '../../platform/errors.js';
import type { Ctx } from '../../platform/tenancy.js';
import { customerByPhoneE164, recordSmsConsent } from '../customers/customers.refs.js';
import { getOrgSettings } from '../settings/settings.service.js';
import { emitMessageEvent, insertMessage, textingBlockers } from './messages.service.js';
import { reportStatus } from './messages.status-reports.js';
import type { TwilioDeps } from './messages.twilio.js';

/*
 * What Twilio's callbacks change (operations.md §10), once their signature was checked
 * (messages.routes.ts). Both are safe to repeat: Twilio retries a callback it got no answer to.
 */

export type TwilioForm = Record<string, string>;

const required = (form: TwilioForm, field: string): string => {
  const value = form[field];
  if (value === undefined || value.trim() === '') throw invalidField(field, 'is required (a form as Twilio posts it)');
  return value;
};

/**
 * A status callback: the text with that MessageSid moves forward only (a late `sent` after
 * `delivered` is ignored, a repeat changes nothing); delivered → message.delivered; undelivered /
 * failed → message.failed (21610 also opts the customer out). A callback that beat the worker's
 * commit of the MessageSid is kept and applied when the id is recorded; an unknown MessageSid
 * changes nothing (messages.status-reports.ts).
 */
export async function applyStatusCallback(ctx: Ctx, form: TwilioForm): Promise<void> {
  const sid = required(form, 'MessageSid');
  const status = required(form, 'MessageStatus').toLowerCase();
  await reportStatus(
    ctx,
    sid,
    { status, errorCode: form.ErrorCode?.trim() || null, errorMessage: form.ErrorMessage?.trim() || null },
    form.To?.trim() || undefined,
  );
}

const STOP = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT']);
const START = new Set(['START', 'YES', 'UNSTOP']);

/**
 * An inbound text: recorded `received` for the customer whose phoneE164 is `From` (else no
 * customer), message.received; a repeat of the same MessageSid changes nothing. Keywords
 * (trimmed, any case) change the consent (source keyword); HELP queues one auto_reply with the
 * organization's name and phone.
 */
export async function receiveInbound(ctx: Ctx, deps: TwilioDeps, form: TwilioForm): Promise<void> {
  const sid = form.MessageSid?.trim() || required(form, 'SmsSid');
  const from = required(form, 'From');
  const to = required(form, 'To');
  const body = form.Body ?? '';
  const customer = await customerByPhoneE164(ctx, from);
  const received = await insertMessage(ctx, {
    direction: 'inbound',
    customerId: customer?.id ?? null,
    to,
    from,
    body,
    kind: 'manual',
    status: 'received',
    providerId: sid,
  });
  if (!received) return;
  await emitMessageEvent(ctx, 'message.received', received);
  const keyword = body.trim().toUpperCase();
  const evidence = `Texted "${body.trim().slice(0, 40)}" from ${from} (${sid})`;
  if (customer && STOP.has(keyword)) {
    await recordSmsConsent(ctx, customer.id, { status: 'opted_out', source: 'keyword', evidence });
  } else if (customer && START.has(keyword)) {
    await recordSmsConsent(ctx, customer.id, { status: 'opted_in', source: 'keyword', evidence });
  } else if (keyword === 'HELP') {
    const settings = await getOrgSettings(ctx);
    const name = settings.companyName ?? settings.name;
    const phone = settings.companyPhone ? ` Call ${settings.companyPhone}.` : '';
    const missing = textingBlockers(settings, deps, customer ?? null, false);
    await insertMessage(ctx, {
      customerId: customer?.id ?? null,
      to: from,
      from: settings.smsFrom ?? to,
      body: `${name}: texts about your service.${phone} Reply STOP to stop, START to start again.`,
      kind: 'auto_reply',
      dedupeKey: `help:${sid}`,
      ...(missing.length > 0
        ? { status: 'skipped', errorMessage: `Not sent: ${missing.join('; ')}` }
        : { status: 'queued' }),
    });
  }
}
