import { and, eq, inArray, type SQL, sql } from 'drizzle-orm';
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
/** Texts one run of the task claims at most (it runs again at once when it claimed any). */
const BATCH = 500;
/** Twilio answering 429/5xx: this many tries in all, then failed. */
export const MAX_TEXT_ATTEMPTS = 3;
const FIRST_RETRY_MS = 5_000;
/** A text `sending` this long has an unknown outcome: failed, never re-sent by itself. */
export const STUCK_SENDING_MS = 10 * 60_000;
/** At most one text a second per organization is handed to Twilio. */
export const PACE_MS = 1_000;
export { TWILIO_OPTED_OUT };

/** A text `sending` longer than this lost its worker (the SDK gives up after 15 s): it no longer holds the pace. */
const IN_FLIGHT_MS = 30_000;

export const textRetryDelayMs = (attempts: number) => FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1);

/** Organizations whose next text one claim takes at once (one text each), handed to Twilio side by side. */
export const CLAIM_BATCH = 100;
/** Texts in flight to Twilio at once from one worker (no transaction is open while Twilio answers). */
export const SEND_CONCURRENCY = 32;

/**
 * Claims the oldest due text of each of up to `limit` organizations (those that waited longest
 * first), and commits them `sending` before anything is sent (at most once: a worker that dies
 * after calling Twilio leaves a `sending` text, which the sweep fails with UNKNOWN_OUTCOME and
 * nobody re-sends). One text per organization per claim, the organizations served longest ago (or
 * never) first, so no organization waits behind another's queue; an organization handed a text
 * less than a second ago (or whose last text Twilio accepted less than a second ago, or is still
 * answering) is passed over (the pace). Each organization taken holds a transaction-scoped advisory lock from the first
 * statement (which picks and locks) to the commit, and the second statement (a new snapshot, so
 * it sees every claim committed before the lock was had) checks the pace again as it claims: two
 * workers never hand two texts of one organization inside the same second.
 */
export async function claimTexts(database: Database, now: Date, limit = CLAIM_BATCH): Promise<MessageRow[]> {
  const at = sql`${now.toISOString()}::timestamptz`;
  const paced = sql`${at} - ${PACE_MS} * interval '1 millisecond'`;
  // The pace counts from Twilio's answer too: a text still on its way (sending, for at most the
  // SDK's time-out) or accepted less than a second ago holds the organization's next one, so two
  // texts never reach Twilio closer than a second even when the first one's request was slow.
  const recent = (org: SQL) => sql`
    SELECT 1 FROM messages h
    WHERE h.organization_id = ${org} AND h.handed_at > ${at} - ${IN_FLIGHT_MS} * interval '1 millisecond'
      AND (h.handed_at > ${paced} OR h.sent_at > ${paced} OR h.status = 'sending')`;
  return asPlatform(database.db, async (tx) => {
    const picked = rowsOf<{ organization_id: string; id: string }>(
      await tx.execute(sql`
        WITH due AS (
          SELECT DISTINCT ON (m.organization_id) m.organization_id, m.id, m.next_attempt_at
          FROM messages m
          WHERE m.status = 'queued' AND m.next_attempt_at <= ${at}
          ORDER BY m.organization_id, m.next_attempt_at, m.id
        ), ready AS MATERIALIZED (
          SELECT due.organization_id, due.id FROM due
          WHERE NOT EXISTS (${recent(sql`due.organization_id`)})
          ORDER BY (SELECT max(l.handed_at) FROM messages l WHERE l.organization_id = due.organization_id) NULLS FIRST,
                   due.next_attempt_at, due.id
          LIMIT ${limit}
        )
        SELECT organization_id, id FROM ready
        WHERE pg_try_advisory_xact_lock(hashtext(${TASK}), hashtext(ready.organization_id))`),
    );
    if (picked.length === 0) return [];
    const pairs = sql.join(
      picked.map((p) => sql`(${p.organization_id}, ${p.id})`),
      sql`, `,
    );
    return tx
      .update(messages)
      .set({
        status: take(messageMachine, 'queued', 'claim'),
        handedAt: now,
        attempts: sql`${messages.attempts} + 1`,
        updatedAt: now,
      })
      .where(
        sql`(messages.organization_id, messages.id) IN (${pairs}) AND messages.status = 'queued'
          AND NOT EXISTS (${recent(sql`messages.organization_id`)})`,
      )
      .returning();
  });
}

/** One due text (the oldest of the organization that waited longest), claimed as claimTexts does. */
export async function claimText(database: Database, now: Date): Promise<MessageRow | undefined> {
  return (await claimTexts(database, now, 1))[0];
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

/** Runs `fn` over `items`, at most `concurrency` at a time. */
async function eachLimited<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

/**
 * Sends up to `limit` due texts at `now` (a function moves time on between claims; tests pass a
 * later time to skip a backoff or the pace instead of waiting), after failing the stuck ones.
 * Each claim takes one text of up to CLAIM_BATCH organizations; they go to Twilio
 * SEND_CONCURRENCY at a time. Returns how many texts it claimed. No transaction is open while
 * Twilio is called.
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
    const batch = await claimTexts(database, at, Math.min(CLAIM_BATCH, limit - claimed));
    if (batch.length === 0) break;
    await eachLimited(batch, SEND_CONCURRENCY, (msg) => deliver(database, deps, msg, at));
    claimed += batch.length;
  }
  return claimed;
}

export const sendTextsTask: WorkerTask = {
  name: TASK,
  intervalMs: 1_000,
  run: (t) => sendDueTexts(t.database, twilioDeps(t.config)),
};
