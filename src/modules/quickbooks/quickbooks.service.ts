import { and, count, eq, max, type SQL } from 'drizzle-orm';
import type { Config } from '../../config.js';
import { quickbooksConnections, quickbooksSyncJobs } from '../../db/schema/index.js';
import { AppError, invalidState } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { ownedRows } from '../../platform/owned-rows.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import type { SecretBox } from '../../platform/secrets.js';
import type { Ctx } from '../../platform/tenancy.js';
import { authorizeUrl, exchangeCode, readState, revokeTokens, signState } from './quickbooks.oauth.js';

/*
 * The connection of an organization to its QuickBooks company (operations.md §11): connect,
 * the callback that stores the sealed tokens, disconnect, the status, and the records that did
 * not sync. The sync itself is quickbooks.sync.ts.
 */

type ConnectionRow = typeof quickbooksConnections.$inferSelect;
type JobRow = typeof quickbooksSyncJobs.$inferSelect;

async function connectionOf(ctx: Ctx): Promise<ConnectionRow | undefined> {
  const [row] = await ctx.tx
    .select()
    .from(quickbooksConnections)
    .where(eq(quickbooksConnections.organizationId, ctx.organizationId));
  return row;
}

export async function connectionStatus(ctx: Ctx) {
  const row = await connectionOf(ctx);
  const counts = await ctx.tx
    .select({ status: quickbooksSyncJobs.status, n: count() })
    .from(quickbooksSyncJobs)
    .where(eq(quickbooksSyncJobs.organizationId, ctx.organizationId))
    .groupBy(quickbooksSyncJobs.status);
  const n = (s: string) => Number(counts.find((c) => c.status === s)?.n ?? 0);
  return {
    status: (row?.status ?? 'disconnected') as 'disconnected' | 'connected' | 'error',
    realmId: row?.realmId ?? null,
    connectedAt: row?.connectedAt.toISOString() ?? null,
    lastSyncAt: row?.lastSyncAt?.toISOString() ?? null,
    lastError: row?.lastError ?? null,
    pending: row ? n('pending') : 0,
    failing: row ? n('failed') : 0,
  };
}

/** The Intuit page to send the owner to, with a `state` bound to this organization and actor for 10 minutes. */
export function startConnect(config: Config, organizationId: string, actorId: string) {
  const state = signState(config, organizationId, actorId);
  return { authorizeUrl: authorizeUrl(config, state) };
}

export interface CallbackQuery {
  code?: string | undefined;
  state?: string | undefined;
  realmId?: string | undefined;
  error?: string | undefined;
}

/**
 * Checks the callback's `state` before anything else: forged → 400, expired → 400, made for
 * another organization or person → 403. Nothing is written until the code is exchanged.
 */
export function checkCallback(config: Config, q: CallbackQuery, organizationId: string, actorId: string) {
  if (!q.state)
    throw new AppError('VALIDATION_FAILED', 'state is missing: start again from connect', {
      details: [{ field: 'state', message: 'required' }],
    });
  const read = readState(config, q.state);
  if (!read.ok) {
    const message =
      read.reason === 'expired'
        ? 'state has expired (it is good for 10 minutes): start again from connect'
        : 'state was not issued by this service: start again from connect';
    throw new AppError('VALIDATION_FAILED', message, { details: [{ field: 'state', message: read.reason }] });
  }
  if (read.organizationId !== organizationId || read.userId !== actorId) {
    throw new AppError(
      'FORBIDDEN',
      'This authorization was started for another organization or person: start again from connect',
    );
  }
  if (q.error) throw invalidState(`QuickBooks did not authorize the connection (${q.error})`);
  if (!q.code || !q.realmId) {
    throw new AppError('VALIDATION_FAILED', 'code and realmId are required (QuickBooks sends them)', {
      details: [
        ...(q.code ? [] : [{ field: 'code', message: 'required' }]),
        ...(q.realmId ? [] : [{ field: 'realmId', message: 'required' }]),
      ],
    });
  }
}

/** Exchanges the code (outside any transaction: it is a call to Intuit). */
export async function tokensForCallback(config: Config, rawQuery: string) {
  return exchangeCode(config, rawQuery);
}

/**
 * Stores the connection with its sealed tokens. A new connection (or another company) reads the
 * event outbox from its start, so what the organization already has syncs too.
 */
export async function saveConnection(
  ctx: Ctx,
  box: SecretBox,
  realmId: string,
  tokens: { accessToken: string; refreshToken: string; accessExpiresAt: Date; refreshExpiresAt: Date | null },
) {
  const before = await connectionOf(ctx);
  const values = {
    status: 'connected',
    realmId,
    accessTokenSealed: box.seal(tokens.accessToken),
    refreshTokenSealed: box.seal(tokens.refreshToken),
    accessExpiresAt: tokens.accessExpiresAt,
    refreshExpiresAt: tokens.refreshExpiresAt,
    tokenGeneration: (before?.tokenGeneration ?? 0) + 1,
    connectedBy: ctx.actor.id,
    connectedAt: new Date(),
    lastError: null,
    updatedAt: new Date(),
    ...(before?.realmId === realmId ? {} : { feedTx: 0, feedEventId: '' }),
  };
  if (before) {
    await ctx.tx
      .update(quickbooksConnections)
      .set(values)
      .where(eq(quickbooksConnections.organizationId, ctx.organizationId));
  } else {
    await ctx.tx
      .insert(quickbooksConnections)
      .values({ id: newId('qbc'), organizationId: ctx.organizationId, ...values });
  }
  return connectionStatus(ctx);
}

/**
 * Forgets the connection and the sync work not done; what is known of QuickBooks' records stays
 * (reconnecting the same company updates them rather than making them again). Returns the
 * refresh token to revoke after the commit.
 */
export async function dropConnection(ctx: Ctx, box: SecretBox): Promise<string | null> {
  const row = await connectionOf(ctx);
  if (!row) return null;
  await ctx.tx.delete(quickbooksSyncJobs).where(eq(quickbooksSyncJobs.organizationId, ctx.organizationId));
  await ctx.tx.delete(quickbooksConnections).where(eq(quickbooksConnections.organizationId, ctx.organizationId));
  try {
    return box.open(row.refreshTokenSealed);
  } catch {
    return null;
  }
}

export { revokeTokens };

export function recordView(r: JobRow) {
  return {
    id: r.id,
    entity: r.entity as 'customer' | 'invoice' | 'payment',
    entityId: r.entityId,
    eventType: r.eventType,
    status: r.status as 'pending' | 'done' | 'failed',
    attempts: r.attempts,
    error: r.error,
    errorCode: r.errorCode,
    quickbooksId: r.quickbooksId,
    syncedAt: r.syncedAt?.toISOString() ?? null,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

export async function listRecords(ctx: Ctx, status: string | undefined, page: Page) {
  const where: SQL[] = [eq(quickbooksSyncJobs.organizationId, ctx.organizationId)];
  if (status) where.push(eq(quickbooksSyncJobs.status, status));
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, quickbooksSyncJobs, and(...where), page);
  return { rows: rows.map(recordView), ...more };
}

const syncRecords = ownedRows(quickbooksSyncJobs, 'Sync record');

/** A failed record goes again (from its first attempt); anything else → 409. */
export async function retryRecord(ctx: Ctx, id: string) {
  const row = await syncRecords.find(ctx, id, true);
  if (row.status !== 'failed') throw invalidState(`Only a failed record can be retried; this one is ${row.status}`);
  // A new round for the record's create: Intuit would answer the old requestid with its refusal.
  const [round] = await ctx.tx
    .select({ n: max(quickbooksSyncJobs.createRound) })
    .from(quickbooksSyncJobs)
    .where(
      and(
        eq(quickbooksSyncJobs.organizationId, ctx.organizationId),
        eq(quickbooksSyncJobs.entity, row.entity),
        eq(quickbooksSyncJobs.entityId, row.entityId),
      ),
    );
  const [updated] = await ctx.tx
    .update(quickbooksSyncJobs)
    .set({
      status: 'pending',
      attempts: 0,
      nextAttemptAt: new Date(),
      lockedUntil: null,
      createRound: Number(round?.n ?? 0) + 1,
      updatedAt: new Date(),
    })
    .where(and(eq(quickbooksSyncJobs.organizationId, ctx.organizationId), eq(quickbooksSyncJobs.id, id)))
    .returning();
  return recordView(updated as JobRow);
}
