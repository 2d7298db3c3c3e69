import { and, eq, inArray, sql } from 'drizzle-orm';
import type { WorkerTask } from '../../background/runner.js';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/client.js';
import { messages } from '../../db/schema/index.js';
import { asPlatform, perOrganization } from '../../platform/cross-tenant.js';
import { take } from '../../platform/state-machine.js';
import { type Ctx, inTenant, systemActor } from '../../platform/tenancy.js';
import { findCustomer, recordSmsConsent } from '../customers/customers.refs.js';
import { getOrgSettings } from '../settings/settings.service.js';
import { emitMessageEvent, type MessageRow, textingBlockers } from './messages.service.js';
import { messageMachine } from './messages.states.js';
import { dropStaleStatusReports, recordProviderId } from './messages.status-reports.js';
import {
  RestException,
  statusCallbackPath,
  TWILIO_OPTED_OUT,
  type TwilioDeps,
  twilioClient,
  twilioCredentials,
  twilioDeps,
} from './messages.twilio.js';

const TASK = 'messages.send';
const ACTOR = systemActor(TASK);
const BATCH = 50;
/** Twilio answering 429/5xx: this many tries in all, then failed. */
export const MAX_TEXT_ATTEMPTS = 3;
const FIRST_RETRY_MS = 5_000;
/** A text `sending` this long has an unknown outcome: failed, never re-sent by itself. */
export const STUCK_SENDING_MS = 10 * 60_000;
/** At most one text a second per organization is handed to Twilio. */
export const PACE_MS = 1_000;
export { TWILIO_OPTED_OUT };

export const textRetryDelayMs = (attempts: number) => FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1);

/**
 * Claims the oldest due text of the organization that waited longest, and commits it `sending`
 * before anything is sent (at most once: a worker that dies after calling Twilio leaves a
 * `sending` text, which the sweep fails with UNKNOWN_OUTCOME and nobody re-sends). The candidates
 * are one per organization (oldest due first), so no organization waits behind another's queue; an
 * organization that was handed a text less than a second ago is passed over (the pace). The pace
 * check and the claim hold a transaction-scoped advisory lock on the organization, so two workers
 * never hand two texts of one organization inside the same second.
 */
export async function claimText(database: Database, now: Date): Promise<MessageRow | undefined> {
  const at = sql`${now.toISOString()}::timestamptz`;
  return asPlatform(database.db, async (tx) => {
    const orgs = rowsOf<{ organization_id: string }>(
      await tx.execute(sql`
        SELECT organization_id FROM (
          SELECT DISTINCT ON (m.organization_id) m.organization_id, m.next_attempt_at
          FROM messages m
          WHERE m.status = 'queued' AND m.next_attempt_at <= ${at}
          ORDER BY m.organization_id, m.next_attempt_at
        ) due
        WHERE NOT EXISTS (
          SELECT 1 FROM messages h
          WHERE h.organization_id = due.organization_id AND h.handed_at > ${at} - ${PACE_MS} * interval '1 millisecond'
        )
        ORDER BY due.next_attempt_at
        LIMIT 20`),
    );
    for (const { organization_id: organizationId } of orgs) {
      const locked = rowsOf<{ ok: boolean }>(
        await tx.execute(sql`SELECT pg_try_advisory_xact_lock(hashtext(${TASK}), hashtext(${organizationId})) AS ok`),
      );
      if (!locked[0]?.ok) continue;
      const claimed = rowsOf<{ id: string }>(
        await tx.execute(sql`
          UPDATE messages SET status = ${take(messageMachine, 'queued', 'claim')}, handed_at = ${at},
                 attempts = attempts + 1, updated_at = ${at}
          WHERE organization_id = ${organizationId} AND id = (
            SELECT id FROM messages
            WHERE organization_id = ${organizationId} AND status = 'queued' AND next_attempt_at <= ${at}
            ORDER BY next_attempt_at, id LIMIT 1 FOR UPDATE SKIP LOCKED
          )
          AND NOT EXISTS (
            SELECT 1 FROM messages h
            WHERE h.organization_id = ${organizationId} AND h.handed_at > ${at} - ${PACE_MS} * interval '1 millisecond'
          )
          RETURNING id`),
      );
      const id = claimed[0]?.id;
      if (!id) continue;
      const [row] = await tx
        .select()
        .from(messages)
        .where(and(eq(messages.organizationId, organizationId), eq(messages.id, id)));
      return row;
    }
    return undefined;
  });
}

type Outcome =
  | { kind: 'accepted'; sid: string }
  | { kind: 'retry'; code: string; message: string }
  | { kind: 'failed'; code: string; message: string };

/** A refusal before Twilio accepted the text (429, 5xx, connection refused) may be retried; anything else may not. */
function outcomeOf(err: unknown, attempts: number): Outcome {
  const retryOrFail = (code: string, message: string): Outcome =>
    attempts < MAX_TEXT_ATTEMPTS ? { kind: 'retry', code, message } : { kind: 'failed', code, message };
  if (err instanceof RestException) {
    const message = (err.message || `Twilio answered ${err.status}`).slice(0, 500);
    if (err.status === 429 || err.status >= 500) return retryOrFail(String(err.code ?? err.status), message);
    return { kind: 'failed', code: String(err.code ?? err.status), message };
  }
  const code = (err as { code?: unknown })?.code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return retryOrFail('UNREACHABLE', `Twilio could not be reached (${code})`);
  }
  // The request may have reached Twilio (a time-out, a reset): sending again could text twice.
  return {
    kind: 'failed',
    code: 'UNKNOWN_OUTCOME',
    message: `Twilio's answer was lost (${err instanceof Error ? err.message : String(err)}); not sent again`.slice(
      0,
      500,
    ),
  };
}

/** Moves a `sending` text on, inside its tenant; nothing when the sweep failed it meanwhile. */
async function finish(ctx: Ctx, msg: MessageRow, set: Partial<MessageRow>): Promise<MessageRow | undefined> {
  const [row] = await ctx.tx
    .update(messages)
    .set({ ...set, updatedAt: new Date() })
    .where(
      and(eq(messages.organizationId, ctx.organizationId), eq(messages.id, msg.id), eq(messages.status, 'sending')),
    )
    .returning();
  return row;
}

/** One claimed text: checked again (consent may have changed since it was queued), sent, the outcome recorded. */
async function deliver(database: Database, deps: TwilioDeps, msg: MessageRow, now: Date): Promise<void> {
  const actor = <T>(fn: (ctx: Ctx) => Promise<T>) => inTenant(database.db, msg.organizationId, ACTOR, fn);
  const send = await actor(async (ctx) => {
    const settings = await getOrgSettings(ctx);
    const customer = msg.customerId ? ((await findCustomer(ctx, msg.customerId)) ?? null) : null;
    const missing = textingBlockers(settings, deps, customer, msg.kind !== 'auto_reply');
    const credentials = twilioCredentials(settings, deps.box);
    if (missing.length > 0 || !credentials || !settings.smsFrom) {
      await finish(ctx, msg, {
        status: take(messageMachine, 'sending', 'skip'),
        errorMessage: `Not sent: ${missing.join('; ')}`,
      });
      return null;
    }
    return { ...credentials, from: settings.smsFrom };
  });
  if (!send) return;
  const { accountSid, authToken, from } = send;
  let outcome: Outcome;
  try {
    const created = await twilioClient({ accountSid, authToken }, deps.api).messages.create({
      to: msg.to,
      body: msg.body,
      statusCallback: `${deps.baseUrl}${statusCallbackPath(msg.organizationId)}`,
      ...(from.startsWith('MG') ? { messagingServiceSid: from } : { from }),
    });
    outcome = { kind: 'accepted', sid: created.sid };
  } catch (err) {
    outcome = outcomeOf(err, msg.attempts);
  }
  await actor(async (ctx) => {
    if (outcome.kind === 'accepted') {
      // With the id, a status Twilio reported before this commit is applied (messages.status-reports.ts).
      await recordProviderId(ctx, msg, outcome.sid, { sentAt: new Date(), errorCode: null, errorMessage: null });
      return;
    }
    if (outcome.kind === 'retry') {
      await finish(ctx, msg, {
        status: take(messageMachine, 'sending', 'retry'),
        errorCode: outcome.code,
        errorMessage: outcome.message,
        nextAttemptAt: new Date(now.getTime() + textRetryDelayMs(msg.attempts)),
      });
      return;
    }
    const failed = await finish(ctx, msg, {
      status: take(messageMachine, 'sending', 'fail'),
      errorCode: outcome.code,
      errorMessage: outcome.message,
    });
    if (!failed) return;
    if (outcome.code === String(TWILIO_OPTED_OUT) && failed.customerId) {
      await recordSmsConsent(ctx, failed.customerId, {
        status: 'opted_out',
        source: 'keyword',
        evidence: `Twilio error ${TWILIO_OPTED_OUT} sending ${failed.id} to ${failed.to}: the number opted out at the carrier`,
      });
    }
    await emitMessageEvent(ctx, 'message.failed', failed);
  });
}

/**
 * Texts left `sending` for STUCK_SENDING_MS (their worker died between the claim and recording
 * Twilio's answer): failed with UNKNOWN_OUTCOME, never sent again by themselves.
 */
export async function failStuckTexts(database: Database, now: Date): Promise<number> {
  const cutoff = new Date(now.getTime() - STUCK_SENDING_MS);
  const stuck = await asPlatform(database.db, (tx) =>
    tx
      .select({ id: messages.id, organization_id: messages.organizationId })
      .from(messages)
      .where(and(eq(messages.status, 'sending'), sql`${messages.handedAt} < ${cutoff.toISOString()}::timestamptz`))
      .limit(500),
  );
  return perOrganization(database.db, stuck, ACTOR, async (ctx, ids) => {
    const failed = await ctx.tx
      .update(messages)
      .set({
        status: take(messageMachine, 'sending', 'lost'),
        errorCode: 'UNKNOWN_OUTCOME',
        errorMessage:
          'The worker stopped after handing the text to Twilio; whether it went is unknown, so it is not sent again',
        updatedAt: now,
      })
      .where(
        and(
          eq(messages.organizationId, ctx.organizationId),
          inArray(messages.id, ids),
          eq(messages.status, 'sending'),
          sql`${messages.handedAt} < ${cutoff.toISOString()}::timestamptz`,
        ),
      )
      .returning();
    for (const row of failed) await emitMessageEvent(ctx, 'message.failed', row);
    return failed.length;
  });
}

/**
 * Sends up to `limit` due texts at `now` (a function moves time on between texts; tests pass a
 * later time to skip a backoff or the pace instead of waiting), after failing the stuck ones.
 * Returns how many texts it claimed. No transaction is open while Twilio is called.
 */
export async function sendDueTexts(
  database: Database,
  deps: TwilioDeps,
  now: Date | (() => Date) = () => new Date(),
  limit = BATCH,
): Promise<number> {
  const clock = typeof now === 'function' ? now : () => now;
  await failStuckTexts(database, clock());
  await dropStaleStatusReports(database, clock());
  let claimed = 0;
  while (claimed < limit) {
    const at = clock();
    const msg = await claimText(database, at);
    if (!msg) break;
    await deliver(database, deps, msg, at);
    claimed++;
  }
  return claimed;
}

export const sendTextsTask: WorkerTask = {
  name: TASK,
  intervalMs: 1_000,
  run: (t) => sendDueTexts(t.database, twilioDeps(t.config)),
};
