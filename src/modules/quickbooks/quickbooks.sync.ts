import { eq } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { quickbooksConnections } from '../../db/schema/index.js';
import { inTenant } from '../../platform/tenancy.js';
import { SYNC_ACTOR } from './quickbooks.actor.js';
import { JobCalls, type Result } from './quickbooks.calls.js';
import type { SyncDeps } from './quickbooks.deps.js';
import { HANDLERS } from './quickbooks.entities.js';
import type { Entity } from './quickbooks.feed.js';
import { claim, finish, type JobRow, roundOf, superseded } from './quickbooks.jobs.js';
import { type Connection, readConnection, refreshed } from './quickbooks.tokens.js';

/*
 * The sync pass (jobs → QuickBooks, operations.md §11), safe in several processes at once: claims
 * due jobs within each realm's slots (quickbooks.jobs.ts), writes each (quickbooks.entities.ts,
 * over quickbooks.calls.ts), records created before the records that refer to them, and
 * finishes them. The feed that makes the jobs is quickbooks.feed.ts.
 */

/** Jobs claimed per pass (each realm's share bounded by its slots). */
const SYNC_BATCH = 50;
/** An access token this close to its expiry is refreshed before use. */
const REFRESH_MARGIN_MS = 60_000;
/** Kinds of records in the order a pass writes them: each may refer to the ones before. */
const ORDER: Entity[] = ['customer', 'invoice', 'payment', 'refund'];

export interface SyncOptions {
  /** The worker's clock (tests move it past backoffs). */
  now?: Date;
  limit?: number;
}

/** One sync pass: claims due jobs and writes them, customers first, then invoices, payments and refunds. */
export async function syncJobs(database: Database, deps: SyncDeps, options: SyncOptions = {}): Promise<number> {
  const now = options.now ?? new Date();
  const jobs = await claim(database, now, options.limit ?? SYNC_BATCH, deps.pace.limits.concurrent);
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
  for (const entity of ORDER) {
    await Promise.all(jobs.filter((j) => j.entity === entity).map(run));
  }
  for (const org of synced) {
    await inTenant(database.db, org, SYNC_ACTOR, (ctx) =>
      ctx.tx
        .update(quickbooksConnections)
        .set({ lastSyncAt: new Date() })
        .where(eq(quickbooksConnections.organizationId, org)),
    );
  }
  return jobs.length;
}
