import { createHash } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { quickbooksRecords } from '../../db/schema/index.js';
import { newId } from '../../platform/ids.js';
import { inTenant } from '../../platform/tenancy.js';
import { SYNC_ACTOR } from './quickbooks.actor.js';
import { type QboCall, type QboOutcome, qboRequest } from './quickbooks.api.js';
import type { SyncDeps } from './quickbooks.deps.js';
import { type Connection, refreshed } from './quickbooks.tokens.js';

/*
 * A job's calls to QuickBooks and what it knows there: a 401 refreshed once, the records already
 * written (table quickbooks_records: our id → QuickBooks' Id and SyncToken), and the write of one
 * record: a create with a `requestid` derived from the record (the same on every retry and in
 * every process, so QuickBooks answers a repeat with the first result instead of a second
 * record), an update with the SyncToken read back from the last write.
 */

/** What became of one job. */
export type Result =
  | { kind: 'done'; quickbooksId: string | null }
  | { kind: 'fault'; code: string; message: string }
  | { kind: 'retry'; message: string }
  | { kind: 'throttled'; retryAfterMs: number }
  | { kind: 'disconnected' };

/** A stable requestid for one write of one record (at most 50 characters, as Intuit allows). */
export function requestIdOf(organizationId: string, realmId: string, entity: string, entityId: string, what: string) {
  return createHash('sha256')
    .update(`${organizationId}|${realmId}|${entity}|${entityId}|${what}`)
    .digest('hex')
    .slice(0, 40);
}

/** A job's calls: the connection, a 401 refreshed once, the records known in QuickBooks. */
export class JobCalls {
  constructor(
    readonly database: Database,
    readonly deps: SyncDeps,
    public conn: Connection,
    /** The record's create round (retries asked for after a refusal): part of the create's requestid. */
    readonly round: number,
  ) {}

  #refreshedOnce = false;

  async request(
    method: 'GET' | 'POST',
    path: string,
    query: Record<string, string>,
    body?: unknown,
  ): Promise<QboOutcome | { kind: 'disconnected' }> {
    const call = (): QboCall => ({
      apiBase: this.deps.config.quickbooks.apiBase,
      realmId: this.conn.realmId,
      accessToken: this.conn.accessToken,
      pace: this.deps.pace,
    });
    const first = await qboRequest(call(), method, path, query, body);
    if (first.kind !== 'unauthorized' || this.#refreshedOnce) return first;
    this.#refreshedOnce = true;
    const next = await refreshed(this.database, this.deps, this.conn);
    if (!next) return { kind: 'disconnected' };
    this.conn = next;
    return qboRequest(call(), method, path, query, body);
  }

  async known(entity: string, entityId: string) {
    const [row] = await inTenant(this.database.db, this.conn.organizationId, SYNC_ACTOR, (ctx) =>
      ctx.tx
        .select()
        .from(quickbooksRecords)
        .where(
          and(
            eq(quickbooksRecords.organizationId, this.conn.organizationId),
            eq(quickbooksRecords.realmId, this.conn.realmId),
            eq(quickbooksRecords.entity, entity),
            eq(quickbooksRecords.entityId, entityId),
          ),
        ),
    );
    return row ?? null;
  }

  async remember(entity: string, entityId: string, quickbooksId: string, syncToken: string) {
    await inTenant(this.database.db, this.conn.organizationId, SYNC_ACTOR, (ctx) =>
      ctx.tx
        .insert(quickbooksRecords)
        .values({
          id: newId('qbr'),
          organizationId: this.conn.organizationId,
          realmId: this.conn.realmId,
          entity,
          entityId,
          quickbooksId,
          syncToken,
        })
        .onConflictDoUpdate({
          target: [
            quickbooksRecords.organizationId,
            quickbooksRecords.realmId,
            quickbooksRecords.entity,
            quickbooksRecords.entityId,
          ],
          set: { quickbooksId, syncToken, updatedAt: new Date() },
        }),
    );
  }

  rid(entity: string, entityId: string, what: string) {
    return requestIdOf(this.conn.organizationId, this.conn.realmId, entity, entityId, what);
  }
}

/** An outcome that is not `ok` as the job's result. */
export function notOk(o: Exclude<QboOutcome, { kind: 'ok' }> | { kind: 'disconnected' }): Result {
  switch (o.kind) {
    case 'unauthorized':
      return { kind: 'retry', message: 'QuickBooks refused the access token after a refresh' };
    case 'throttled':
      return { kind: 'throttled', retryAfterMs: o.retryAfterMs };
    case 'transient':
      return { kind: 'retry', message: o.message };
    case 'fault':
      return { kind: 'fault', code: o.code, message: o.message };
    case 'disconnected':
      return { kind: 'disconnected' };
  }
}

/** The entity object of a v3 answer (`{Customer: {Id, SyncToken}}`). */
export function written(body: Record<string, unknown>, name: string): { Id: string; SyncToken: string } | null {
  const obj = body[name] as { Id?: unknown; SyncToken?: unknown } | undefined;
  return obj && typeof obj.Id === 'string' ? { Id: obj.Id, SyncToken: String(obj.SyncToken ?? '0') } : null;
}

/** Stale SyncToken (another write came between): QuickBooks' code 5010. */
const STALE = '5010';
/** The Customer DisplayName is taken by another customer there. */
export const DUPLICATE_NAME = '6240';

/**
 * Creates the record (stable requestid) or updates it with the SyncToken known; a stale token
 * is read back once and the update sent again.
 */
export async function upsert(
  calls: JobCalls,
  entity: string,
  entityId: string,
  name: 'Customer' | 'Invoice' | 'Payment' | 'RefundReceipt',
  body: Record<string, unknown>,
  jobId: string,
): Promise<Result> {
  const path = name.toLowerCase();
  const known = await calls.known(entity, entityId);
  let outcome: QboOutcome | { kind: 'disconnected' };
  if (!known) {
    outcome = await calls.request(
      'POST',
      path,
      { requestid: calls.rid(entity, entityId, `create:${calls.round}`) },
      body,
    );
    if (outcome.kind === 'fault' && outcome.code === DUPLICATE_NAME && name === 'Customer') {
      // Two of our customers may share a name; QuickBooks' DisplayName may not: tell them apart by our id.
      const renamed = { ...body, DisplayName: `${String(body.DisplayName)} (${entityId})`.slice(0, 100) };
      outcome = await calls.request(
        'POST',
        path,
        { requestid: calls.rid(entity, entityId, `create-renamed:${calls.round}`) },
        renamed,
      );
    }
  } else {
    let syncToken = known.syncToken;
    const send = () =>
      calls.request(
        'POST',
        path,
        { requestid: calls.rid(entity, entityId, `update:${jobId}:${syncToken}`) },
        { ...body, Id: known.quickbooksId, SyncToken: syncToken, sparse: true },
      );
    outcome = await send();
    if (outcome.kind === 'fault' && outcome.code === STALE) {
      const read = await calls.request('GET', `${path}/${encodeURIComponent(known.quickbooksId)}`, {});
      if (read.kind !== 'ok') return notOk(read);
      syncToken = written(read.body, name)?.SyncToken ?? syncToken;
      outcome = await send();
    }
  }
  if (outcome.kind !== 'ok') return notOk(outcome);
  const w = written(outcome.body, name);
  if (!w) return { kind: 'retry', message: `QuickBooks answered without the ${name}` };
  await calls.remember(entity, entityId, w.Id, w.SyncToken);
  return { kind: 'done', quickbooksId: w.Id };
}

/** The record another one needs in QuickBooks first (an invoice's customer): waits for it. */
export function waitFor(what: string): Result {
  return { kind: 'retry', message: `waiting for ${what} to reach QuickBooks first` };
}
