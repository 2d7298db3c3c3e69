import { stateMachine } from '../../platform/state-machine.js';

export const MESSAGE_STATUSES = [
  'queued',
  'sending',
  'sent',
  'delivered',
  'undelivered',
  'failed',
  'skipped',
  'received',
] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

export const MESSAGE_KINDS = [
  'manual',
  'visit_reminder',
  'on_my_way',
  'invoice_link',
  'estimate_link',
  'auto_reply',
] as const;
export type MessageKind = (typeof MESSAGE_KINDS)[number];

/**
 * An outbound text (operations.md §10). The worker claims a queued text (`claim`: `sending` is
 * committed before Twilio is called), then Twilio accepts it (`accept` → sent), answers 429/5xx
 * (`retry` → queued again, 3 tries), refuses it (`fail`), or the worker finds it may no longer be
 * sent (`skip`: consent withdrawn, texting switched off). A text left `sending` is `lost` after
 * 10 minutes: failed with UNKNOWN_OUTCOME, never re-sent. Twilio's status callbacks then move a sent
 * text on (`deliver`, `undeliver`, `fail`), only forward (messages.callbacks.ts). An inbound text is
 * `received` and never moves.
 */
export const messageMachine = stateMachine<
  MessageStatus,
  'claim' | 'accept' | 'retry' | 'fail' | 'skip' | 'lost' | 'deliver' | 'undeliver'
>('message', {
  queued: { claim: 'sending', skip: 'skipped' },
  sending: { accept: 'sent', retry: 'queued', fail: 'failed', skip: 'skipped', lost: 'failed' },
  sent: { deliver: 'delivered', undeliver: 'undelivered', fail: 'failed' },
  delivered: {},
  undelivered: {},
  failed: {},
  skipped: {},
  received: {},
});

/**
 * How far along a status is, for Twilio's callbacks: a callback moves a text only to a higher
 * rank (a late `sent` after `delivered` is ignored, a repeat is a no-op).
 */
export const PROVIDER_STATUS_RANK: Readonly<Record<string, number>> = {
  queued: 0,
  accepted: 0,
  scheduled: 0,
  sending: 1,
  sent: 2,
  delivered: 3,
  undelivered: 3,
  failed: 3,
  read: 3,
};
