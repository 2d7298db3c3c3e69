import { and, eq, inArray, type SQL } from 'drizzle-orm';
import { messages } from '../../db/schema/index.js';
import { listValues } from '../../platform/enum.js';
import { invalidField, invalidState } from '../../platform/errors.js';
import { emit } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import { ownedRows } from '../../platform/owned-rows.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import type { Ctx } from '../../platform/tenancy.js';
import { type CustomerRow, customerById, liveCustomer, requireCustomer } from '../customers/customers.refs.js';
import { getOrgSettings, type OrgSettings } from '../settings/settings.service.js';
import { quietHoursEnd } from './messages.quiet-hours.js';
import type { MessageListInput, SendMessageInput } from './messages.schemas.js';
import { segmentsOf } from './messages.segments.js';
import type { MessageKind, MessageStatus } from './messages.states.js';
import { type TwilioDeps, twilioCredentials } from './messages.twilio.js';

/*
 * THE way a change texts a customer (operations.md §10): the message row is written in the
 * change's own transaction (`queued`), and the worker (`messages.send`, messages.tasks.ts) sends
 * it through Twilio. Nothing talks to Twilio inside a request. A manual text that cannot be sent
 * is refused (409 naming what is missing); an automatic one is recorded `skipped` with the reason.
 */

export type MessageRow = typeof messages.$inferSelect;

export function messageView(r: MessageRow) {
  return {
    id: r.id,
    customerId: r.customerId,
    direction: r.direction as 'outbound' | 'inbound',
    to: r.to,
    from: r.from,
    body: r.body,
    kind: r.kind as MessageKind,
    status: r.status as MessageStatus,
    segments: r.segments,
    errorCode: r.errorCode,
    errorMessage: r.errorMessage,
    providerId: r.providerId,
    jobId: r.jobId,
    invoiceId: r.invoiceId,
    estimateId: r.estimateId,
    sendAfter: r.sendAfter,
    createdAt: r.createdAt,
    sentAt: r.sentAt,
    deliveredAt: r.deliveredAt,
  };
}
export type MessageView = ReturnType<typeof messageView>;

/** The event data of message.received / delivered / failed. */
export const messageEvent = (r: MessageRow) => ({ messageId: r.id, customerId: r.customerId, message: messageView(r) });

export async function emitMessageEvent(
  ctx: Ctx,
  type: 'message.received' | 'message.delivered' | 'message.failed',
  r: MessageRow,
) {
  await emit(ctx, type, messageEvent(r));
}

/**
 * What stops the organization texting this customer, in words (empty when nothing does):
 * texting switched on, Twilio configured (with a sender), a valid mobile number, consent opted_in.
 * `needsConsent` false (a HELP answer) only refuses an opted-out number.
 */
export function textingBlockers(
  settings: OrgSettings,
  deps: TwilioDeps,
  customer: Pick<CustomerRow, 'phoneE164' | 'smsConsent'> | null,
  needsConsent = true,
): string[] {
  const missing: string[] = [];
  if (!settings.smsEnabled) missing.push('texting is off (settings smsEnabled)');
  if (!twilioCredentials(settings, deps.box))
    missing.push('Twilio is not configured (settings twilioAccountSid and twilioAuthToken)');
  if (!settings.smsFrom) missing.push('no sender number (settings smsFrom)');
  if (customer && !customer.phoneE164) missing.push('the customer has no valid mobile number (phoneE164)');
  if (customer?.smsConsent === 'opted_out') missing.push('the customer opted out of texts (smsConsent opted_out)');
  else if (needsConsent && customer?.smsConsent !== 'opted_in') {
    missing.push('the customer has not opted in to texts (smsConsent opted_in)');
  }
  return missing;
}

/** POST /api/messages: a text from the office, sent at once (not held by quiet hours), or 409 naming what is missing. */
export async function sendManualText(ctx: Ctx, deps: TwilioDeps, input: SendMessageInput): Promise<MessageView> {
  if (input.body.trim() === '') throw invalidField('body', 'must not be blank');
  const customer = await requireCustomer(ctx, input.customerId);
  const settings = await getOrgSettings(ctx);
  const missing = textingBlockers(settings, deps, customer);
  if (missing.length > 0) throw invalidState(`This customer cannot be texted: ${missing.join('; ')}`);
  const row = await insertMessage(ctx, {
    customerId: customer.id,
    to: customer.phoneE164 as string,
    from: settings.smsFrom as string,
    body: input.body,
    kind: 'manual',
    status: 'queued',
  });
  return messageView(row as MessageRow);
}

export interface AutomaticText {
  customerId: string;
  body: string;
  kind: Exclude<MessageKind, 'manual' | 'auto_reply'>;
  jobId?: string;
  invoiceId?: string;
  estimateId?: string;
  /** Made once per subject and channel: a second text with the same key is not made. */
  dedupeKey?: string;
  /** Held by the quiet hours (reminders, document links); on-my-way texts are not. */
  quiet: boolean;
  /**
   * What a text that may not be sent becomes: `skip` (default) records it `skipped` with the
   * reason; `refuse` throws 409 INVALID_STATE naming what is missing (a document sent with
   * `channels: ["sms"]`: the request fails and its transaction writes nothing).
   */
  whenBlocked?: 'skip' | 'refuse';
  now?: Date;
}

/**
 * An automatic text (operations.md §10): queued when it may be sent, `sendAfter` the end of the
 * quiet hours when it falls inside them; recorded `skipped` with the reason when it may not
 * (never sent). Returns null when a text with the same `dedupeKey` exists already.
 */
export async function queueAutomaticText(ctx: Ctx, deps: TwilioDeps, text: AutomaticText): Promise<MessageView | null> {
  const customer = await customerById(ctx, text.customerId);
  const settings = await getOrgSettings(ctx);
  const missing = textingBlockers(settings, deps, customer);
  if (missing.length > 0 && text.whenBlocked === 'refuse') {
    throw invalidState(`This customer cannot be texted: ${missing.join('; ')}`);
  }
  const now = text.now ?? new Date();
  const row = await insertMessage(ctx, {
    customerId: customer.id,
    to: customer.phoneE164 ?? customer.phone ?? '',
    from: settings.smsFrom ?? '',
    body: text.body,
    kind: text.kind,
    jobId: text.jobId ?? null,
    invoiceId: text.invoiceId ?? null,
    estimateId: text.estimateId ?? null,
    dedupeKey: text.dedupeKey ?? null,
    ...(missing.length > 0
      ? { status: 'skipped', errorMessage: `Not sent: ${missing.join('; ')}` }
      : {
          status: 'queued',
          sendAfter: text.quiet ? quietHoursEnd(now, settings.timezone, settings.smsQuietHours) : null,
        }),
  });
  return row ? messageView(row) : null;
}

type NewMessage = Omit<typeof messages.$inferInsert, 'id' | 'organizationId' | 'direction' | 'segments'> & {
  direction?: 'outbound' | 'inbound';
};

/** Writes one text in the caller's transaction; undefined when its dedupeKey or providerId exists already. */
export async function insertMessage(ctx: Ctx, values: NewMessage): Promise<MessageRow | undefined> {
  const [row] = await ctx.tx
    .insert(messages)
    .values({
      direction: 'outbound',
      ...values,
      id: newId('msg'),
      organizationId: ctx.organizationId,
      segments: segmentsOf(values.body),
      ...(values.sendAfter ? { nextAttemptAt: values.sendAfter } : {}),
    })
    .onConflictDoNothing()
    .returning();
  return row;
}

const findMessage = ownedRows(messages, 'Message').find;

export async function getMessage(ctx: Ctx, id: string): Promise<MessageView> {
  return messageView(await findMessage(ctx, id));
}

/** GET /api/messages (newest first) with its filters; `customerId` alone is a customer's conversation. */
export async function listMessages(ctx: Ctx, filter: Omit<MessageListInput, keyof Page>, page: Page) {
  const where: SQL[] = [eq(messages.organizationId, ctx.organizationId)];
  if (filter.customerId !== undefined) where.push(eq(messages.customerId, filter.customerId));
  if (filter.direction !== undefined) where.push(eq(messages.direction, filter.direction));
  const statuses = listValues<MessageStatus>(filter.status);
  if (statuses) where.push(inArray(messages.status, statuses));
  const kinds = listValues<MessageKind>(filter.kind);
  if (kinds) where.push(inArray(messages.kind, kinds));
  const result = await listPage(ctx.tx, ctx.organizationId, messages, and(...where), page);
  return { ...result, rows: result.rows.map(messageView) };
}

/** GET /api/customers/{id}/messages: 404 for an unknown customer, else its texts newest first. */
export async function customerConversation(ctx: Ctx, customerId: string, page: Page) {
  await liveCustomer.find(ctx, customerId);
  return listMessages(ctx, { customerId }, page);
}
