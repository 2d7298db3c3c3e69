import { createHash } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import type { Config } from '../../config.js';
import { type Database, rowsOf } from '../../db/client.js';
import { quickbooksConnections, quickbooksRecords, quickbooksSyncJobs } from '../../db/schema/index.js';
import { asPlatform } from '../../platform/cross-tenant.js';
import { eventsAfter, type OutboxEvent } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import { SecretBox } from '../../platform/secrets.js';
import { inTenant, systemActor } from '../../platform/tenancy.js';
import { type QboCall, type QboOutcome, qboRequest } from './quickbooks.api.js';
import { intuitRefusal, refreshTokens } from './quickbooks.oauth.js';
import { RealmThrottle } from './quickbooks.throttle.js';

/*
 * The sync, one way (operations.md §11). Two passes, each safe in several processes at once:
 *
 * feed: for each connected organization (its connection row locked, SKIP LOCKED), reads the
 *   event outbox past its place and makes one job per change of a customer, an invoice out of
 *   draft or a payment (unique per record and event: a feed run twice makes nothing twice),
 *   then moves its place, all in one transaction. Changes commit with their events, so every
 *   committed change is synced and a rolled-back one never is. A new connection reads from the
 *   start: what the organization already has syncs too.
 * sync: claims due jobs (FOR UPDATE SKIP LOCKED, a lease), at most one per record at a time and
 *   in order per record, and writes them to QuickBooks over the v3 API: a create carries a
 *   `requestid` derived from the record (the same on every retry and in every process, so
 *   QuickBooks answers a repeat with the first result instead of a second record), an update the
 *   SyncToken read back from the last write.
 */

const ACTOR = systemActor('quickbooks.sync');
/** Events read per organization and pass. */
const FEED_BATCH = 500;
/** Jobs claimed per pass. */
const SYNC_BATCH = 50;
/** How long a claimed job is held before another worker may take it (a crashed worker's). */
const LEASE_MS = 120_000;
/** Attempts before a job that keeps failing for a passing reason (5xx, timeouts) is failed. */
export const MAX_ATTEMPTS = 8;
/** An access token this close to its expiry is refreshed before use. */
const REFRESH_MARGIN_MS = 60_000;

export interface SyncDeps {
  config: Config;
  box: SecretBox;
  throttle: RealmThrottle;
}

let shared: SyncDeps | undefined;
/** The process's deps: one throttle per process, shared by every pass. */
export function syncDeps(config: Config): SyncDeps {
  if (!shared || shared.config !== config)
    shared = { config, box: new SecretBox(config.authSecret), throttle: new RealmThrottle() };
  return shared;
}

// ---------------------------------------------------------------------------------------------
// feed

type Entity = 'customer' | 'invoice' | 'payment';
interface JobSeed {
  entity: Entity;
  entityId: string;
  payload: Record<string, unknown>;
}

/** The job an event makes, if any. */
function seedOf(e: OutboxEvent): JobSeed | null {
  const d = e.data;
  if (e.type === 'customer.created' || e.type === 'customer.updated') {
    const customer = d.customer as { id?: string } | undefined;
    return customer?.id ? { entity: 'customer', entityId: customer.id, payload: { customer } } : null;
  }
  if (e.type.startsWith('invoice.')) {
    const invoice = d.invoice as { id?: string; status?: string } | undefined;
    if (!invoice?.id || invoice.status === 'draft') return null;
    return { entity: 'invoice', entityId: invoice.id, payload: { invoice } };
  }
  if (e.type === 'payment.received') {
    const payment = d.payment as { id?: string } | undefined;
    const invoice = d.invoice as { id?: string; customerId?: string } | undefined;
    if (!payment?.id || !invoice?.id) return null;
    return {
      entity: 'payment',
      entityId: payment.id,
      payload: { payment, invoiceId: invoice.id, customerId: invoice.customerId },
    };
  }
  return null;
}

/** One feed pass over the connected organizations; answers how many events it read. */
export async function feedJobs(database: Database): Promise<number> {
  return asPlatform(database.db, async (tx) => {
    const connections = rowsOf<{ organization_id: string; feed_tx: string | number; feed_event_id: string }>(
      await tx.execute(sql`
        SELECT organization_id, feed_tx, feed_event_id FROM quickbooks_connections
        WHERE status = 'connected'
        ORDER BY updated_at
        LIMIT 20
        FOR UPDATE SKIP LOCKED`),
    );
    let read = 0;
    for (const c of connections) {
      const batch = await eventsAfter(
        tx,
        c.organization_id,
        { tx: Number(c.feed_tx), id: c.feed_event_id },
        FEED_BATCH,
      );
      if (batch.length === 0) continue;
      read += batch.length;
      const jobs = batch.flatMap((e) => {
        const seed = seedOf(e);
        return seed
          ? [{ id: newId('qbj'), organizationId: c.organization_id, ...seed, version: e.id, eventType: e.type }]
          : [];
      });
      if (jobs.length > 0) await tx.insert(quickbooksSyncJobs).values(jobs).onConflictDoNothing();
      const last = batch.at(-1) as OutboxEvent;
      await tx
        .update(quickbooksConnections)
        .set({ feedTx: last.tx, feedEventId: last.id })
        .where(eq(quickbooksConnections.organizationId, c.organization_id));
    }
    return read;
  });
}

// ---------------------------------------------------------------------------------------------
// tokens

interface Connection {
  organizationId: string;
  realmId: string;
  accessToken: string;
  generation: number;
  expiresAt: Date;
}

async function readConnection(database: Database, deps: SyncDeps, organizationId: string): Promise<Connection | null> {
  const [row] = await inTenant(database.db, organizationId, ACTOR, (ctx) =>
    ctx.tx.select().from(quickbooksConnections).where(eq(quickbooksConnections.organizationId, organizationId)),
  );
  if (row?.status !== 'connected') return null;
  return {
    organizationId,
    realmId: row.realmId,
    accessToken: deps.box.open(row.accessTokenSealed),
    generation: row.tokenGeneration,
    expiresAt: row.accessExpiresAt,
  };
}

/**
 * A fresh access token, refreshed under the connection row's lock (FOR UPDATE, held across the
 * call to Intuit): of two processes that saw the same expired token, the second finds the
 * generation moved on and uses the first one's token, so the rotated refresh token is used once.
 * Intuit refusing the refresh token (revoked, expired) puts the connection in `error`.
 */
async function refreshed(database: Database, deps: SyncDeps, seen: Connection): Promise<Connection | null> {
  return inTenant(database.db, seen.organizationId, ACTOR, async (ctx) => {
    const [row] = await ctx.tx
      .select()
      .from(quickbooksConnections)
      .where(eq(quickbooksConnections.organizationId, seen.organizationId))
      .for('update');
    if (row?.status !== 'connected') return null;
    const current = {
      organizationId: seen.organizationId,
      realmId: row.realmId,
      accessToken: deps.box.open(row.accessTokenSealed),
      generation: row.tokenGeneration,
      expiresAt: row.accessExpiresAt,
    };
    if (row.tokenGeneration !== seen.generation) return current;
    let tokens: Awaited<ReturnType<typeof refreshTokens>>;
    try {
      tokens = await refreshTokens(deps.config, deps.box.open(row.refreshTokenSealed));
    } catch (err) {
      const status = Number(
        (err as { authResponse?: { response?: { status?: number } } })?.authResponse?.response?.status,
      );
      const refusal = intuitRefusal(err);
      if (status === 400 || status === 401 || /invalid_grant/.test(refusal)) {
        await ctx.tx
          .update(quickbooksConnections)
          .set({
            status: 'error',
            lastError: `QuickBooks refused the refresh token (${refusal}): connect again`,
            updatedAt: new Date(),
          })
          .where(eq(quickbooksConnections.organizationId, seen.organizationId));
        return null;
      }
      throw new Error(`QuickBooks' token endpoint failed (${refusal})`);
    }
    await ctx.tx
      .update(quickbooksConnections)
      .set({
        accessTokenSealed: deps.box.seal(tokens.accessToken),
        refreshTokenSealed: deps.box.seal(tokens.refreshToken),
        accessExpiresAt: tokens.accessExpiresAt,
        refreshExpiresAt: tokens.refreshExpiresAt,
        tokenGeneration: row.tokenGeneration + 1,
        updatedAt: new Date(),
      })
      .where(eq(quickbooksConnections.organizationId, seen.organizationId));
    return {
      ...current,
      accessToken: tokens.accessToken,
      generation: row.tokenGeneration + 1,
      expiresAt: tokens.accessExpiresAt,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// one job

type JobRow = typeof quickbooksSyncJobs.$inferSelect;

type Result =
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
class JobCalls {
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
      throttle: this.deps.throttle,
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
    const [row] = await inTenant(this.database.db, this.conn.organizationId, ACTOR, (ctx) =>
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
    await inTenant(this.database.db, this.conn.organizationId, ACTOR, (ctx) =>
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
function notOk(o: Exclude<QboOutcome, { kind: 'ok' }> | { kind: 'disconnected' }): Result {
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
function written(body: Record<string, unknown>, name: string): { Id: string; SyncToken: string } | null {
  const obj = body[name] as { Id?: unknown; SyncToken?: unknown } | undefined;
  return obj && typeof obj.Id === 'string' ? { Id: obj.Id, SyncToken: String(obj.SyncToken ?? '0') } : null;
}

/** Stale SyncToken (another write came between): QuickBooks' code 5010. */
const STALE = '5010';
/** The Customer DisplayName is taken by another customer there. */
const DUPLICATE_NAME = '6240';

/**
 * Creates the record (stable requestid) or updates it with the SyncToken known; a stale token
 * is read back once and the update sent again.
 */
async function upsert(
  calls: JobCalls,
  entity: string,
  entityId: string,
  name: 'Customer' | 'Invoice' | 'Payment',
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

type Money = number;
interface CustomerPayload {
  id: string;
  name: string;
  firstName: string;
  lastName: string | null;
  company: string | null;
  email: string | null;
  phone: string | null;
  billingAddress: string | null;
  billingCity: string | null;
  billingState: string | null;
  billingZip: string | null;
  notes: string | null;
  status?: string;
}
interface InvoicePayload {
  id: string;
  invoiceNumber: string;
  customerId: string;
  status: string;
  lineItems: Array<{ description: string; quantity: number; unitPrice: Money; amount: Money; taxable?: boolean }>;
  tax: Money;
  invoiceDate: string;
  dueDate: string;
  notes: string | null;
}
interface PaymentPayload {
  payment: { id: string; amount: Money; paymentDate: string; method: string };
  invoiceId: string;
  customerId: string;
}

function customerBody(c: CustomerPayload): Record<string, unknown> {
  const name = (c.name || [c.firstName, c.lastName].filter(Boolean).join(' ') || c.company || c.id).slice(0, 100);
  return {
    DisplayName: name,
    GivenName: c.firstName?.slice(0, 100) ?? undefined,
    FamilyName: c.lastName?.slice(0, 100) ?? undefined,
    CompanyName: c.company ?? undefined,
    PrimaryEmailAddr: c.email ? { Address: c.email } : undefined,
    PrimaryPhone: c.phone ? { FreeFormNumber: c.phone } : undefined,
    BillAddr: c.billingAddress
      ? {
          Line1: c.billingAddress,
          City: c.billingCity ?? undefined,
          CountrySubDivisionCode: c.billingState ?? undefined,
          PostalCode: c.billingZip ?? undefined,
        }
      : undefined,
    Notes: c.notes ? c.notes.slice(0, 2000) : undefined,
    Active: c.status === undefined ? true : c.status !== 'archived',
  };
}

/**
 * The one "Services" item every line is written with (its description carries ours): found by
 * name in the company, else created once (stable requestid) on its first income account.
 */
async function servicesItem(calls: JobCalls): Promise<{ id: string } | Result> {
  const known = await calls.known('item', 'services');
  if (known) return { id: known.quickbooksId };
  const found = await calls.request('GET', 'query', { query: "select * from Item where Name = 'Services'" });
  if (found.kind !== 'ok') return notOk(found);
  const item = ((found.body.QueryResponse as { Item?: Array<{ Id: string; SyncToken?: string }> })?.Item ?? [])[0];
  if (item) {
    await calls.remember('item', 'services', item.Id, String(item.SyncToken ?? '0'));
    return { id: item.Id };
  }
  const accounts = await calls.request('GET', 'query', {
    query: "select * from Account where AccountType = 'Income' maxresults 1",
  });
  if (accounts.kind !== 'ok') return notOk(accounts);
  const account = ((accounts.body.QueryResponse as { Account?: Array<{ Id: string }> })?.Account ?? [])[0];
  if (!account)
    return {
      kind: 'fault',
      code: 'NO_INCOME_ACCOUNT',
      message: 'The QuickBooks company has no income account for a "Services" item',
    };
  const made = await calls.request(
    'POST',
    'item',
    { requestid: calls.rid('item', 'services', 'create') },
    { Name: 'Services', Type: 'Service', IncomeAccountRef: { value: account.Id } },
  );
  if (made.kind !== 'ok') return notOk(made);
  const w = written(made.body, 'Item');
  if (!w) return { kind: 'retry', message: 'QuickBooks answered without the Item' };
  await calls.remember('item', 'services', w.Id, w.SyncToken);
  return { id: w.Id };
}

/** The record another one needs in QuickBooks first (an invoice's customer): waits for it. */
function waitFor(what: string): Result {
  return { kind: 'retry', message: `waiting for ${what} to reach QuickBooks first` };
}

async function syncCustomer(calls: JobCalls, job: JobRow): Promise<Result> {
  const c = (job.payload as { customer: CustomerPayload }).customer;
  return upsert(calls, 'customer', job.entityId, 'Customer', customerBody(c), job.id);
}

async function syncInvoice(calls: JobCalls, job: JobRow): Promise<Result> {
  const inv = (job.payload as { invoice: InvoicePayload }).invoice;
  if (inv.status === 'void') {
    const known = await calls.known('invoice', inv.id);
    if (!known) return { kind: 'done', quickbooksId: null }; // never reached QuickBooks: nothing to void
    const voided = await calls.request(
      'POST',
      'invoice',
      { operation: 'void', requestid: calls.rid('invoice', inv.id, 'void') },
      { Id: known.quickbooksId, SyncToken: known.syncToken, sparse: true },
    );
    if (voided.kind !== 'ok') return notOk(voided);
    const w = written(voided.body, 'Invoice');
    if (w) await calls.remember('invoice', inv.id, w.Id, w.SyncToken);
    return { kind: 'done', quickbooksId: known.quickbooksId };
  }
  const customer = await calls.known('customer', inv.customerId);
  if (!customer) return waitFor(`customer ${inv.customerId}`);
  const item = await servicesItem(calls);
  if ('kind' in item) return item;
  const body = {
    DocNumber: inv.invoiceNumber,
    TxnDate: inv.invoiceDate,
    DueDate: inv.dueDate,
    CustomerRef: { value: customer.quickbooksId },
    PrivateNote: inv.notes ?? undefined,
    Line: inv.lineItems.map((l) => ({
      DetailType: 'SalesItemLineDetail',
      Amount: l.amount,
      Description: l.description.slice(0, 4000),
      SalesItemLineDetail: {
        ItemRef: { value: item.id },
        Qty: l.quantity,
        UnitPrice: l.unitPrice,
        TaxCodeRef: { value: l.taxable === false ? 'NON' : 'TAX' },
      },
    })),
    TxnTaxDetail: { TotalTax: inv.tax },
  };
  return upsert(calls, 'invoice', inv.id, 'Invoice', body, job.id);
}

async function syncPayment(calls: JobCalls, job: JobRow): Promise<Result> {
  const p = job.payload as PaymentPayload;
  const known = await calls.known('payment', p.payment.id);
  if (known) return { kind: 'done', quickbooksId: known.quickbooksId }; // a payment is written once
  const invoice = await calls.known('invoice', p.invoiceId);
  if (!invoice) return waitFor(`invoice ${p.invoiceId}`);
  const customer = await calls.known('customer', p.customerId);
  if (!customer) return waitFor(`customer ${p.customerId}`);
  const body = {
    CustomerRef: { value: customer.quickbooksId },
    TotalAmt: p.payment.amount,
    TxnDate: p.payment.paymentDate,
    PrivateNote: `${p.payment.id} (${p.payment.method})`,
    Line: [{ Amount: p.payment.amount, LinkedTxn: [{ TxnId: invoice.quickbooksId, TxnType: 'Invoice' }] }],
  };
  return upsert(calls, 'payment', p.payment.id, 'Payment', body, job.id);
}

const HANDLERS: Record<Entity, (calls: JobCalls, job: JobRow) => Promise<Result>> = {
  customer: syncCustomer,
  invoice: syncInvoice,
  payment: syncPayment,
};

// ---------------------------------------------------------------------------------------------
// the pass

/** Delay before attempt n+1 of a job that failed for a passing reason: 2 s doubling, at most 10 min. */
export function backoffMs(attempts: number): number {
  return Math.min(2_000 * 2 ** Math.max(0, attempts - 1), 600_000);
}

/**
 * Claims due jobs: pending, past their next attempt, not held by another worker's lease, of a
 * connected organization, and the oldest pending one of their record (so a record's changes go
 * in order and never two at once). FOR UPDATE SKIP LOCKED: two workers never claim one job, and
 * the lease is committed before any call to QuickBooks.
 */
async function claim(database: Database, now: Date, limit: number): Promise<JobRow[]> {
  return asPlatform(database.db, async (tx) => {
    const rows = rowsOf<{ organization_id: string; id: string }>(
      await tx.execute(sql`
        SELECT j.organization_id, j.id FROM quickbooks_sync_jobs j
        WHERE j.status = 'pending' AND j.next_attempt_at <= ${now.toISOString()}::timestamptz
          AND (j.locked_until IS NULL OR j.locked_until < ${now.toISOString()}::timestamptz)
          AND EXISTS (SELECT 1 FROM quickbooks_connections c
                      WHERE c.organization_id = j.organization_id AND c.status = 'connected')
          AND NOT EXISTS (SELECT 1 FROM quickbooks_sync_jobs o
                          WHERE o.organization_id = j.organization_id AND o.entity = j.entity
                            AND o.entity_id = j.entity_id AND o.status = 'pending'
                            AND (o.created_at, o.id) < (j.created_at, j.id))
        ORDER BY j.next_attempt_at, j.created_at, j.id
        LIMIT ${limit}
        FOR UPDATE OF j SKIP LOCKED`),
    );
    if (rows.length === 0) return [];
    const until = new Date(now.getTime() + LEASE_MS);
    const claimed: JobRow[] = [];
    for (const r of rows) {
      const [row] = await tx
        .update(quickbooksSyncJobs)
        .set({ lockedUntil: until, attempts: sql`${quickbooksSyncJobs.attempts} + 1`, updatedAt: now })
        .where(and(eq(quickbooksSyncJobs.organizationId, r.organization_id), eq(quickbooksSyncJobs.id, r.id)))
        .returning();
      if (row) claimed.push(row);
    }
    return claimed;
  });
}

/**
 * Whether a later change of the same record is waiting: this one is then passed over (the later
 * carries the whole record). The job's own created_at is read in the statement: a JavaScript Date
 * would cut its microseconds and find the job later than itself.
 */
async function superseded(database: Database, job: JobRow): Promise<boolean> {
  const rows = await inTenant(database.db, job.organizationId, ACTOR, (ctx) =>
    ctx.tx.execute(sql`
      SELECT 1 FROM quickbooks_sync_jobs o
      WHERE o.organization_id = ${job.organizationId} AND o.entity = ${job.entity} AND o.entity_id = ${job.entityId}
        AND o.status = 'pending'
        AND (o.created_at, o.id) > (SELECT j.created_at, j.id FROM quickbooks_sync_jobs j
                                    WHERE j.organization_id = ${job.organizationId} AND j.id = ${job.id})
      LIMIT 1`),
  );
  return rowsOf(rows).length > 0;
}

/** The record's create round: the highest of its jobs (a retry asked for raises it). */
async function roundOf(database: Database, job: JobRow): Promise<number> {
  const rows = await inTenant(database.db, job.organizationId, ACTOR, (ctx) =>
    ctx.tx.execute(sql`
      SELECT coalesce(max(create_round), 0) AS n FROM quickbooks_sync_jobs
      WHERE organization_id = ${job.organizationId} AND entity = ${job.entity} AND entity_id = ${job.entityId}`),
  );
  return Number(rowsOf<{ n: number | string }>(rows)[0]?.n ?? 0);
}

async function finish(database: Database, job: JobRow, result: Result, now: Date): Promise<void> {
  const where = and(eq(quickbooksSyncJobs.organizationId, job.organizationId), eq(quickbooksSyncJobs.id, job.id));
  let set: Partial<typeof quickbooksSyncJobs.$inferInsert>;
  switch (result.kind) {
    case 'done':
      set = { status: 'done', quickbooksId: result.quickbooksId, syncedAt: now, error: null, errorCode: null };
      break;
    case 'fault':
      set = { status: 'failed', error: result.message, errorCode: result.code };
      break;
    case 'throttled':
      // Not the record's fault: the attempt does not count.
      set = { attempts: Math.max(0, job.attempts - 1), nextAttemptAt: new Date(now.getTime() + result.retryAfterMs) };
      break;
    case 'disconnected':
      set = { attempts: Math.max(0, job.attempts - 1), error: 'The QuickBooks connection needs to be made again' };
      break;
    case 'retry':
      set =
        job.attempts >= MAX_ATTEMPTS
          ? { status: 'failed', error: result.message, errorCode: 'GAVE_UP' }
          : { nextAttemptAt: new Date(now.getTime() + backoffMs(job.attempts)), error: result.message };
      break;
  }
  await inTenant(database.db, job.organizationId, ACTOR, (ctx) =>
    ctx.tx
      .update(quickbooksSyncJobs)
      .set({ ...set, lockedUntil: null, updatedAt: new Date() })
      .where(where),
  );
}

export interface SyncOptions {
  /** The worker's clock (tests move it past backoffs). */
  now?: Date;
  limit?: number;
}

/** One sync pass: claims due jobs and writes them, customers first, then invoices, then payments. */
export async function syncJobs(database: Database, deps: SyncDeps, options: SyncOptions = {}): Promise<number> {
  const now = options.now ?? new Date();
  const jobs = await claim(database, now, options.limit ?? SYNC_BATCH);
  if (jobs.length === 0) return 0;
  const connections = new Map<string, Connection | null>();
  const connectionOf = async (org: string) => {
    if (!connections.has(org)) {
      let conn = await readConnection(database, deps, org);
      if (conn && conn.expiresAt.getTime() - REFRESH_MARGIN_MS < Date.now())
        conn = await refreshed(database, deps, conn);
      connections.set(org, conn);
    }
    return connections.get(org) ?? null;
  };
  const synced = new Set<string>();
  const run = async (job: JobRow) => {
    let result: Result;
    try {
      if (await superseded(database, job)) {
        result = { kind: 'done', quickbooksId: null };
      } else {
        const conn = await connectionOf(job.organizationId);
        result = conn
          ? await HANDLERS[job.entity as Entity](new JobCalls(database, deps, conn, await roundOf(database, job)), job)
          : { kind: 'disconnected' };
      }
    } catch (err) {
      result = { kind: 'retry', message: (err as Error).message };
    }
    if (result.kind === 'done') synced.add(job.organizationId);
    await finish(database, job, result, now);
  };
  for (const entity of ['customer', 'invoice', 'payment'] as const) {
    await Promise.all(jobs.filter((j) => j.entity === entity).map(run));
  }
  for (const org of synced) {
    await inTenant(database.db, org, ACTOR, (ctx) =>
      ctx.tx
        .update(quickbooksConnections)
        .set({ lastSyncAt: new Date() })
        .where(eq(quickbooksConnections.organizationId, org)),
    );
  }
  return jobs.length;
}
