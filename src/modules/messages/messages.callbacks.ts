import { and, eq } from 'drizzle-orm';
import { messages } from '../../db/schema/index.js';
import { invalidField } from '../../platform/errors.js';
import { take } from '../../platform/state-machine.js';
import type { Ctx } from '../../platform/tenancy.js';
import { customerByPhoneE164, recordSmsConsent } from '../customers/customers.refs.js';
import { getOrgSettings } from '../settings/settings.service.js';
import { emitMessageEvent, insertMessage, textingBlockers } from './messages.service.js';
import { messageMachine, PROVIDER_STATUS_RANK } from './messages.states.js';
import { TWILIO_OPTED_OUT } from './messages.tasks.js';
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

/** Twilio's MessageStatus → the move of our machine, for the final statuses. */
const MOVES: Readonly<Record<string, 'deliver' | 'undeliver' | 'fail'>> = {
  delivered: 'deliver',
  read: 'deliver',
  undelivered: 'undeliver',
  failed: 'fail',
};

/**
 * A status callback: the text with that MessageSid moves forward only (a late `sent` after
 * `delivered` is ignored, a repeat changes nothing); an unknown MessageSid changes nothing.
 * delivered → message.delivered; undelivered / failed → message.failed (21610 also opts the
 * customer out).
 */
export async function applyStatusCallback(ctx: Ctx, form: TwilioForm): Promise<void> {
  const sid = required(form, 'MessageSid');
  const reported = required(form, 'MessageStatus').toLowerCase();
  const [row] = await ctx.tx
    .select()
    .from(messages)
    .where(
      and(
        eq(messages.organizationId, ctx.organizationId),
        eq(messages.providerId, sid),
        eq(messages.direction, 'outbound'),
      ),
    )
    .for('update');
  if (!row) return;
  const rank = PROVIDER_STATUS_RANK[reported];
  const current = PROVIDER_STATUS_RANK[row.status] ?? Number.POSITIVE_INFINITY;
  const move = MOVES[reported];
  if (rank === undefined || rank <= current || !move) return;
  const errorCode = form.ErrorCode?.trim() || null;
  const [updated] = await ctx.tx
    .update(messages)
    .set({
      status: take(messageMachine, 'sent', move),
      ...(move === 'deliver' ? { deliveredAt: new Date() } : {}),
      ...(errorCode ? { errorCode, errorMessage: form.ErrorMessage?.trim() || `Twilio reported ${reported}` } : {}),
      updatedAt: new Date(),
    })
    .where(and(eq(messages.organizationId, ctx.organizationId), eq(messages.id, row.id)))
    .returning();
  if (!updated) return;
  if (errorCode === String(TWILIO_OPTED_OUT) && updated.customerId) {
    await recordSmsConsent(ctx, updated.customerId, {
      status: 'opted_out',
      source: 'keyword',
      evidence: `Twilio error ${TWILIO_OPTED_OUT} for ${updated.id}: the number opted out at the carrier`,
    });
  }
  await emitMessageEvent(ctx, move === 'deliver' ? 'message.delivered' : 'message.failed', updated);
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
