import { and, eq, inArray, type SQL, sql } from 'drizzle-orm';
import type { WorkerTask } from '../../background/runner.js';
import type { Database, Tx } from '../../db/client.js';
import { rowsOf } from '../../db/client.js';
import { messages } from '../../db/schema/index.js';
import { valuesList } from '../../db/values.js';
import { asPlatform, perOrganization } from '../../platform/cross-tenant.js';
import { take } from '../../platform/state-machine.js';
import { type Ctx, inTenant, systemActor } from '../../platform/tenancy.js';
import { customersOfOrganizations, recordSmsConsent } from '../customers/customers.refs.js';
import { settingsOfOrganizations } from '../settings/settings.service.js';
import { emitMessageEvent, type MessageRow, textingBlockers } from './messages.service.js';
import { messageMachine } from './messages.states.js';
import { dropStaleStatusReports, recordProviderId } from './messages.status-reports.js';
import {
  isTwilioRestException,
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
const BATCH = 1_000;
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
 * workers never hand two texts of one organization inside the same second. The LIMIT counts the
 * organizations locked, in the order above (a volatile filter is not pushed below the
 * materialized, ordered list): two workers claiming at once each take the first `limit` they
 * could lock, instead of both picking the same ones and one coming back empty.
 */
async function claimIn(tx: Tx, now: Date, limit: number): Promise<MessageRow[]> {
  const at = sql`${now.toISOString()}::timestamptz`;
  const paced = sql`${at} - ${PACE_MS} * interval '1 millisecond'`;
  // The pace counts from Twilio's answer too: a text still on its way (sending, for at most the
  // SDK's time-out) or accepted less than a second ago holds the organization's next one, so two
  // texts never reach Twilio closer than a second even when the first one's request was slow.
  const recent = (org: SQL) => sql`
    SELECT 1 FROM messages h
    WHERE h.organization_id = ${org} AND h.handed_at > ${at} - ${IN_FLIGHT_MS} * interval '1 millisecond'
      AND (h.handed_at > ${paced} OR h.sent_at > ${paced} OR h.status = 'sending')`;
  // The organizations with a due text come from an index-only read of messages_org_queued_idx
  // (drizzle/0052; no sort), then each one's next due text is one probe of that index and its
  // last handed text one of messages_org_handed_idx. Driven by the queued texts, not by every
  // organization: a claim runs several times a second, and most organizations have nothing queued.
  // (A read and a sort of every queued text took 60 ms a claim at 10,000 queued.)
  // Grouped and correlated on organization_id, the distribution column: Citus pushes both down.
  const picked = rowsOf<{ organization_id: string; id: string }>(
    await tx.execute(sql`
        WITH ready AS MATERIALIZED (
          SELECT o.id AS organization_id, d.id
          FROM (
            SELECT DISTINCT q.organization_id AS id FROM messages q
            WHERE q.status = 'queued' AND q.next_attempt_at <= ${at}
          ) o
          CROSS JOIN LATERAL (
            SELECT m.id, m.next_attempt_at FROM messages m
            WHERE m.organization_id = o.id AND m.status = 'queued' AND m.next_attempt_at <= ${at}
            ORDER BY m.next_attempt_at, m.id
            LIMIT 1
          ) d
          WHERE NOT EXISTS (${recent(sql`o.id`)})
          ORDER BY (SELECT max(l.handed_at) FROM messages l WHERE l.organization_id = o.id) NULLS FIRST,
                   d.next_attempt_at, d.id
        )
        SELECT organization_id, id FROM ready
        WHERE pg_try_advisory_xact_lock(hashtext(${TASK}), hashtext(ready.organization_id))
        LIMIT ${limit}`),
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
}

export async function claimTexts(database: Database, now: Date, limit = CLAIM_BATCH): Promise<MessageRow[]> {
  return asPlatform(database.db, (tx) => claimIn(tx, now, limit));
}

/** A claimed text with what sending it needs: the organization's Twilio account, or why it may not be sent. */
interface ClaimedText {
  msg: MessageRow;
  send: { accountSid: string; authToken: string; from: string } | null;
  blocked: string[];
}

/**
 * claimTexts, and in the same transaction (statements after the claim: they see what committed
 * before it) the settings of the claimed texts' organizations and their customers, each read
 * once for the whole batch instead of a tenant transaction per text: checked again here because
 * consent, the number or the Twilio account may have changed since the text was queued.
 */
async function claimWithContext(
  database: Database,
  deps: TwilioDeps,
  now: Date,
  limit: number,
): Promise<ClaimedText[]> {
  return asPlatform(database.db, async (tx) => {
    const rows = await claimIn(tx, now, limit);
    if (rows.length === 0) return [];
    const settings = await settingsOfOrganizations(
      tx,
      rows.map((r) => r.organizationId),
    );
    const customers = await customersOfOrganizations(
      tx,
      rows.flatMap((r) => (r.customerId ? [{ organizationId: r.organizationId, id: r.customerId }] : [])),
    );
    return rows.map((msg): ClaimedText => {
      const org = settings.get(msg.organizationId);
      if (!org) return { msg, send: null, blocked: ['the organization no longer exists'] };
      const customer = msg.customerId ? (customers.get(`${msg.organizationId}:${msg.customerId}`) ?? null) : null;
      const blocked = textingBlockers(org, deps, customer, msg.kind !== 'auto_reply');
      const credentials = twilioCredentials(org, deps.box);
      if (blocked.length > 0 || !credentials || !org.smsFrom) return { msg, send: null, blocked };
      return { msg, send: { ...credentials, from: org.smsFrom }, blocked };
    });
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
  if (isTwilioRestException(err)) {
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

/** Hands one claimed text to Twilio (no transaction open meanwhile) and answers what came of it. */
async function handOver(deps: TwilioDeps, msg: MessageRow, send: NonNullable<ClaimedText['send']>): Promise<Outcome> {
  const { accountSid, authToken, from } = send;
  try {
    const created = await twilioClient({ accountSid, authToken }, deps.api).messages.create({
      to: msg.to,
      body: msg.body,
      statusCallback: `${deps.baseUrl}${statusCallbackPath(msg.organizationId)}`,
      ...(from.startsWith('MG') ? { messagingServiceSid: from } : { from }),
    });
    return { kind: 'accepted', sid: created.sid };
  } catch (err) {
    return outcomeOf(err, msg.attempts);
  }
}

/**
 * Twilio's ids of a batch of accepted texts, recorded in one cross-tenant transaction (`sending`
 * → `sent`) instead of one per text. It first takes the (organization, MessageSid) locks a
 * status callback takes (messages.status-reports.ts), in a fixed order, and holds them to the
 * commit: a callback that came first and kept its report is seen here, one that comes later
 * waits and then finds the id. A text with a kept report (rare: Twilio called back before this
 * commit) is left to `recordProviderId` in its tenant, which applies the report in the
 * transaction that records the id, and emits its event. Answers the texts so left over.
 */
async function recordAccepted(
  database: Database,
  accepted: Array<{ msg: MessageRow; sid: string; sentAt: Date }>,
): Promise<Array<{ msg: MessageRow; sid: string; sentAt: Date }>> {
  if (accepted.length === 0) return [];
  const sorted = [...accepted].sort((x, y) =>
    x.msg.organizationId === y.msg.organizationId
      ? x.sid.localeCompare(y.sid)
      : x.msg.organizationId.localeCompare(y.msg.organizationId),
  );
  return asPlatform(database.db, async (tx) => {
    const keys = valuesList(sorted.map((a) => [a.msg.organizationId, a.sid]));
    await tx.execute(
      sql`SELECT pg_advisory_xact_lock(hashtext('messages.sid:' || k.org), hashtext(k.sid)) FROM (${keys}) AS k(org, sid)`,
    );
    const keptRows = rowsOf<{ organization_id: string; provider_id: string }>(
      await tx.execute(sql`
        SELECT r.organization_id, r.provider_id FROM message_status_reports r
        WHERE (r.organization_id, r.provider_id) IN (SELECT k.org, k.sid FROM (${keys}) AS k(org, sid))`),
    );
    const kept = new Set(keptRows.map((r) => `${r.organization_id}:${r.provider_id}`));
    const plain = sorted.filter((a) => !kept.has(`${a.msg.organizationId}:${a.sid}`));
    if (plain.length > 0) {
      const status = take(messageMachine, 'sending', 'accept');
      const rows = valuesList(
        plain.map((a) => [a.msg.organizationId, a.msg.id, a.sid, sql`${a.sentAt.toISOString()}::timestamptz`]),
      );
      await tx.execute(sql`
        UPDATE messages SET status = ${status}, provider_id = v.sid, sent_at = v.sent_at,
          error_code = NULL, error_message = NULL, updated_at = now()
        FROM (${rows}) AS v(org, id, sid, sent_at)
        WHERE messages.organization_id = v.org AND messages.id = v.id AND messages.status = 'sending'`);
    }
    return sorted.filter((a) => kept.has(`${a.msg.organizationId}:${a.sid}`));
  });
}

/** A text that was not accepted (skipped, to retry, or failed), recorded in its tenant with its event. */
async function recordRefusal(
  database: Database,
  msg: MessageRow,
  outcome: Exclude<Outcome, { kind: 'accepted' }> | { kind: 'skip'; blocked: string[] },
  now: Date,
): Promise<void> {
  await inTenant(database.db, msg.organizationId, ACTOR, async (ctx) => {
    if (outcome.kind === 'skip') {
      await finish(ctx, msg, {
        status: take(messageMachine, 'sending', 'skip'),
        errorMessage: `Not sent: ${outcome.blocked.join('; ')}`,
      });
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

interface Outcomes {
  accepted: Array<{ msg: MessageRow; sid: string; sentAt: Date }>;
  /** `at`: the time of the claim (a retry's backoff counts from it). */
  refused: Array<{ msg: MessageRow; outcome: Parameters<typeof recordRefusal>[2]; at: Date }>;
}

/**
 * Twilio's answers recorded as they come, one recording at a time (a group commit): each
 * recording takes every answer that arrived while the previous one ran. A text is `sending`
 * until its answer is recorded, and a `sending` text holds its organization's next one (the
 * pace), so an answer recorded at the end of its whole batch (and after the batch before's)
 * held each organization longer than the second the pace asks for. `failure` is the first
 * recording that failed; the answers after it are still recorded.
 */
class Recorder {
  #pending: Outcomes = { accepted: [], refused: [] };
  #running: Promise<void> | undefined;
  failure: { error: unknown } | undefined;

  constructor(private readonly database: Database) {}

  add(answer: { accepted?: Outcomes['accepted'][number]; refused?: Outcomes['refused'][number] }): void {
    if (answer.accepted) this.#pending.accepted.push(answer.accepted);
    if (answer.refused) this.#pending.refused.push(answer.refused);
    this.#running ??= this.#run();
  }

  async #run(): Promise<void> {
    // Lets the answers arriving in the same turn of the event loop join this recording.
    await new Promise((r) => setImmediate(r));
    while (this.#pending.accepted.length > 0 || this.#pending.refused.length > 0) {
      const outcomes = this.#pending;
      this.#pending = { accepted: [], refused: [] };
      const r = await settle(recordOutcomes(this.database, outcomes));
      if (!r.ok) this.failure ??= { error: r.error };
    }
    this.#running = undefined;
  }

  /** Every answer added so far recorded (or failed). */
  async drained(): Promise<void> {
    while (this.#running) await this.#running;
  }
}

/** One claimed batch: each text that may go handed to Twilio, SEND_CONCURRENCY at a time; each answer to `recorder`. */
async function sendBatch(deps: TwilioDeps, batch: ClaimedText[], at: Date, recorder: Recorder): Promise<void> {
  await eachLimited(batch, SEND_CONCURRENCY, async ({ msg, send, blocked }) => {
    if (!send) {
      recorder.add({ refused: { msg, outcome: { kind: 'skip', blocked }, at } });
      return;
    }
    const outcome = await handOver(deps, msg, send);
    if (outcome.kind === 'accepted') recorder.add({ accepted: { msg, sid: outcome.sid, sentAt: new Date() } });
    else recorder.add({ refused: { msg, outcome, at } });
  });
}

/**
 * Answers recorded, the accepted texts together. A worker that dies before that commit leaves
 * its texts `sending`: failed UNKNOWN_OUTCOME by the sweep, never sent twice.
 */
async function recordOutcomes(database: Database, { accepted, refused }: Outcomes): Promise<void> {
  const leftOver = await recordAccepted(database, accepted);
  for (const a of leftOver) {
    await inTenant(database.db, a.msg.organizationId, ACTOR, (ctx) =>
      recordProviderId(ctx, a.msg, a.sid, { sentAt: a.sentAt, errorCode: null, errorMessage: null }),
    );
  }
  for (const r of refused) await recordRefusal(database, r.msg, r.outcome, r.at);
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

/** Whether any text is due now (held back by the pace, or by another worker's claim). */
async function anyTextDue(database: Database, now: Date): Promise<boolean> {
  const [row] = await asPlatform(database.db, (tx) =>
    tx
      .select({ id: messages.id })
      .from(messages)
      .where(and(eq(messages.status, 'queued'), sql`${messages.nextAttemptAt} <= ${now.toISOString()}::timestamptz`))
      .limit(1),
  );
  return row !== undefined;
}

/** How long a run with a live clock waits before claiming again when every due text is held by the pace. */
const PACED_WAIT_MS = 100;

const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

/**
 * Sends up to `limit` due texts at `now` (a function moves time on between claims; tests pass a
 * later time to skip a backoff or the pace instead of waiting), after failing the stuck ones.
 * Each claim takes one text of up to CLAIM_BATCH organizations; they go to Twilio
 * SEND_CONCURRENCY at a time. Returns how many texts it claimed. No transaction is open while
 * Twilio is called.
 *
 * A pipeline, so that the worker is not idle while the database answers: the next batch is
 * claimed while this one is with Twilio, and Twilio's answers are recorded as they come, while
 * the rest are sent (one recording at a time, Recorder). The pace holds regardless: a claim passes over every
 * organization with a text `sending`. When a run has sent texts and the rest are held by the pace
 * (each organization's next text due within the second), a live clock waits PACED_WAIT_MS and
 * claims again, for up to PACE_MS of empty claims, instead of the task's interval.
 */
export async function sendDueTexts(
  database: Database,
  deps: TwilioDeps,
  now: Date | (() => Date) = () => new Date(),
  limit = BATCH,
): Promise<number> {
  const live = typeof now === 'function';
  const clock = typeof now === 'function' ? now : () => now;
  await failStuckTexts(database, clock());
  await dropStaleStatusReports(database, clock());
  let claimed = 0;
  let emptySince: number | undefined;
  const recorder = new Recorder(database);
  let claimFailure: { error: unknown } | undefined;
  const failure = () => claimFailure ?? recorder.failure;
  const claimNext = () => {
    const at = clock();
    return settle(
      claimWithContext(database, deps, at, Math.min(CLAIM_BATCH, limit - claimed)).then((b) => ({ b, at })),
    );
  };
  let next: ReturnType<typeof claimNext> | undefined = claimNext();
  while (next) {
    const result = await next;
    next = undefined;
    if (!result.ok) {
      claimFailure = { error: result.error };
      break;
    }
    const { b: batch, at } = result.value;
    if (batch.length === 0) {
      const waited = emptySince === undefined ? 0 : Date.now() - emptySince;
      if (!live || failure() || claimed === 0 || claimed >= limit || waited >= PACE_MS) break;
      const due = await settle(anyTextDue(database, clock()));
      if (!due.ok || !due.value) break;
      emptySince ??= Date.now();
      await new Promise((r) => setTimeout(r, PACED_WAIT_MS));
      next = claimNext();
      continue;
    }
    emptySince = undefined;
    claimed += batch.length;
    // Claimed texts are always sent and recorded, even after a failure: only claiming stops.
    if (claimed < limit && !failure()) next = claimNext();
    await sendBatch(deps, batch, at, recorder);
  }
  await recorder.drained();
  const failed = failure();
  if (failed) throw failed.error;
  return claimed;
}

export const sendTextsTask: WorkerTask = {
  name: TASK,
  intervalMs: 1_000,
  run: (t) => sendDueTexts(t.database, twilioDeps(t.config)),
};
