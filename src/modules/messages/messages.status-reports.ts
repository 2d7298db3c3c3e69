import { and, eq, isNull, lt, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { messageStatusReports, messages } from '../../db/schema/index.js';
import { asPlatform } from '../../platform/cross-tenant.js';
import { take } from '../../platform/state-machine.js';
import type { Ctx } from '../../platform/tenancy.js';
import { recordSmsConsent } from '../customers/customers.refs.js';
import { emitMessageEvent, type MessageRow } from './messages.service.js';
import { messageMachine, PROVIDER_STATUS_RANK } from './messages.states.js';
import { TWILIO_OPTED_OUT } from './messages.twilio.js';

/*
 * Twilio's word on a text's fate (operations.md §10), however it arrives. A status callback
 * normally finds its text by MessageSid (`providerId`). But the worker records that id only after
 * Twilio answered the create call, in a commit of its own, and Twilio may call back before that
 * commit: such a report is kept in `message_status_reports` by MessageSid and applied by the
 * worker in the very transaction that records the id (`recordProviderId`).
 *
 * Twilio does not retry a status callback answered 4xx/5xx (only connection failures and time-outs,
 * and only with the URL's connection overrides), so answering non-2xx would lose it: it is kept.
 *
 * Across processes and workers: the callback and the worker both take a transaction-scoped
 * advisory lock on (organization, MessageSid) before looking. Whichever commits first, the other
 * then sees it (READ COMMITTED: each statement after the lock sees what committed before): the
 * callback finds the recorded id and applies the report itself, or the worker finds the kept
 * report and applies it. Nothing is lost and nothing is applied twice.
 */

export interface StatusReport {
  /** Twilio's MessageStatus, lower case. */
  status: string;
  errorCode: string | null;
  errorMessage: string | null;
}

/** Twilio's final MessageStatus → the move of our machine. */
const MOVES: Readonly<Record<string, 'deliver' | 'undeliver' | 'fail'>> = {
  delivered: 'deliver',
  read: 'deliver',
  undelivered: 'undeliver',
  failed: 'fail',
};

/** Kept reports are dropped after this long (their text was failed UNKNOWN_OUTCOME, or never had the id). */
export const REPORT_KEPT_MS = 24 * 60 * 60_000;

/** Serializes the callback and the worker on one MessageSid of one organization, until commit. */
async function lockProviderId(ctx: Ctx, sid: string): Promise<void> {
  await ctx.tx.execute(
    sql`SELECT pg_advisory_xact_lock(hashtext(${`messages.sid:${ctx.organizationId}`}), hashtext(${sid}))`,
  );
}

/**
 * Moves a sent text by a report, only forward (a late `sent` after `delivered` is ignored, a
 * repeat is a no-op): delivered → message.delivered; undelivered / failed → message.failed, and
 * Twilio's 21610 opts the customer out. Answers the text as it now is.
 */
export async function applyStatusReport(ctx: Ctx, row: MessageRow, report: StatusReport): Promise<MessageRow> {
  const rank = PROVIDER_STATUS_RANK[report.status];
  const current = PROVIDER_STATUS_RANK[row.status] ?? Number.POSITIVE_INFINITY;
  const move = MOVES[report.status];
  if (rank === undefined || rank <= current || !move || row.status !== 'sent') return row;
  const [updated] = await ctx.tx
    .update(messages)
    .set({
      status: take(messageMachine, 'sent', move),
      ...(move === 'deliver' ? { deliveredAt: new Date() } : {}),
      ...(report.errorCode
        ? { errorCode: report.errorCode, errorMessage: report.errorMessage || `Twilio reported ${report.status}` }
        : {}),
      updatedAt: new Date(),
    })
    .where(and(eq(messages.organizationId, ctx.organizationId), eq(messages.id, row.id)))
    .returning();
  if (!updated) return row;
  if (report.errorCode === String(TWILIO_OPTED_OUT) && updated.customerId) {
    await recordSmsConsent(ctx, updated.customerId, {
      status: 'opted_out',
      source: 'keyword',
      evidence: `Twilio error ${TWILIO_OPTED_OUT} for ${updated.id}: the number opted out at the carrier`,
    });
  }
  await emitMessageEvent(ctx, move === 'deliver' ? 'message.delivered' : 'message.failed', updated);
  return updated;
}

/**
 * A status callback (its signature checked): applied to the text with that MessageSid; kept when
 * no text has the id yet but one of the organization's texts is being handed to Twilio (`sending`,
 * no id: the worker's commit is behind Twilio's callback); otherwise the MessageSid is unknown
 * and nothing is written. Only final statuses are kept (a `sent` is what the worker records anyway).
 */
export async function reportStatus(ctx: Ctx, sid: string, report: StatusReport, to?: string): Promise<void> {
  await lockProviderId(ctx, sid);
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
  if (row) {
    await applyStatusReport(ctx, row, report);
    return;
  }
  if (!MOVES[report.status]) return;
  const [inFlight] = await ctx.tx
    .select({ id: messages.id })
    .from(messages)
    .where(
      and(
        eq(messages.organizationId, ctx.organizationId),
        eq(messages.status, 'sending'),
        isNull(messages.providerId),
        ...(to ? [eq(messages.to, to)] : []),
      ),
    )
    .limit(1);
  if (!inFlight) return;
  const [kept] = await ctx.tx
    .select()
    .from(messageStatusReports)
    .where(and(eq(messageStatusReports.organizationId, ctx.organizationId), eq(messageStatusReports.providerId, sid)));
  if (kept && (PROVIDER_STATUS_RANK[kept.status] ?? 0) >= (PROVIDER_STATUS_RANK[report.status] ?? 0)) return;
  const values = { status: report.status, errorCode: report.errorCode, errorMessage: report.errorMessage };
  await ctx.tx
    .insert(messageStatusReports)
    .values({ organizationId: ctx.organizationId, providerId: sid, ...values })
    .onConflictDoUpdate({
      target: [messageStatusReports.organizationId, messageStatusReports.providerId],
      set: { ...values, receivedAt: new Date() },
    });
}

/**
 * The worker records Twilio's MessageSid on the text it just handed over (`sending` → `sent`), and
 * applies a status Twilio reported for it meanwhile. Undefined when the text is no longer
 * `sending` (the stuck sweep failed it).
 */
export async function recordProviderId(
  ctx: Ctx,
  msg: MessageRow,
  sid: string,
  set: Partial<MessageRow>,
): Promise<MessageRow | undefined> {
  await lockProviderId(ctx, sid);
  const [sent] = await ctx.tx
    .update(messages)
    .set({ ...set, providerId: sid, status: take(messageMachine, 'sending', 'accept'), updatedAt: new Date() })
    .where(
      and(eq(messages.organizationId, ctx.organizationId), eq(messages.id, msg.id), eq(messages.status, 'sending')),
    )
    .returning();
  if (!sent) return undefined;
  const [kept] = await ctx.tx
    .delete(messageStatusReports)
    .where(and(eq(messageStatusReports.organizationId, ctx.organizationId), eq(messageStatusReports.providerId, sid)))
    .returning();
  if (!kept) return sent;
  return applyStatusReport(ctx, sent, {
    status: kept.status,
    errorCode: kept.errorCode,
    errorMessage: kept.errorMessage,
  });
}

/** Drops reports kept longer than REPORT_KEPT_MS (no text ever took their MessageSid). */
export async function dropStaleStatusReports(database: Database, now: Date): Promise<number> {
  const cutoff = new Date(now.getTime() - REPORT_KEPT_MS);
  const dropped = await asPlatform(database.db, (tx) =>
    tx
      .delete(messageStatusReports)
      .where(lt(messageStatusReports.receivedAt, cutoff))
      .returning({ id: messageStatusReports.providerId }),
  );
  return dropped.length;
}
