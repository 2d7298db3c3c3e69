import { and, eq, sql } from 'drizzle-orm';
import { type Database, rowsOf } from '../../db/client.js';
import { quickbooksSyncJobs } from '../../db/schema/index.js';
import { asPlatform } from '../../platform/cross-tenant.js';
import { inTenant } from '../../platform/tenancy.js';
import { SYNC_ACTOR } from './quickbooks.actor.js';
import type { Result } from './quickbooks.calls.js';

/*
 * The sync's jobs (table quickbooks_sync_jobs, one per change of a record, made by the feed):
 * claimed with a lease, in order per record and within the realm's slots, and finished with
 * their result (done, failed with QuickBooks' own text, or due again later).
 */

export type JobRow = typeof quickbooksSyncJobs.$inferSelect;

/** How long a claimed job is held before another worker may take it (a crashed worker's). */
const LEASE_MS = 120_000;
/** Attempts before a job that keeps failing for a passing reason (5xx, timeouts) is failed. */
export const MAX_ATTEMPTS = 8;

/** Delay before attempt n+1 of a job that failed for a passing reason: 2 s doubling, at most 10 min. */
export function backoffMs(attempts: number): number {
  return Math.min(2_000 * 2 ** Math.max(0, attempts - 1), 600_000);
}

/**
 * Claims due jobs: pending, past their next attempt, not held by another worker's lease, of a
 * connected organization, and the oldest pending one of their record (so a record's changes go
 * in order and never two at once). FOR UPDATE SKIP LOCKED: two workers never claim one job, and
 * the lease is committed before any call to QuickBooks.
 *
 * Per realm, at most `concurrent` jobs are under a lease at once, across every worker: a job
 * sends its requests one after another, so that bounds the realm's requests in flight (Intuit:
 * 10). The realm's slots are counted and taken under a transaction-scoped advisory lock of the
 * realm (a worker finding it held passes the realm over this time), and the count is a new
 * statement after the lock, so it sees every lease committed before.
 */
export async function claim(database: Database, now: Date, limit: number, concurrent: number): Promise<JobRow[]> {
  const at = sql`${now.toISOString()}::timestamptz`;
  return asPlatform(database.db, async (tx) => {
    const realms = rowsOf<{ realm_id: string }>(
      await tx.execute(sql`
        SELECT c.realm_id FROM quickbooks_connections c
        JOIN quickbooks_sync_jobs j ON j.organization_id = c.organization_id
        WHERE c.status = 'connected' AND j.status = 'pending' AND j.next_attempt_at <= ${at}
          AND (j.locked_until IS NULL OR j.locked_until < ${at})
        GROUP BY c.realm_id
        ORDER BY min(j.next_attempt_at)
        LIMIT 20`),
    );
    const until = new Date(now.getTime() + LEASE_MS);
    const claimed: JobRow[] = [];
    for (const { realm_id: realm } of realms) {
      if (claimed.length >= limit) break;
      const [lock] = rowsOf<{ got: boolean }>(
        await tx.execute(
          sql`SELECT pg_try_advisory_xact_lock(hashtext('quickbooks.realm'), hashtext(${realm})) AS got`,
        ),
      );
      if (!lock?.got) continue;
      const [busy] = rowsOf<{ n: number | string }>(
        await tx.execute(sql`
          SELECT count(*) AS n FROM quickbooks_sync_jobs j
          JOIN quickbooks_connections c ON c.organization_id = j.organization_id
          WHERE c.realm_id = ${realm} AND j.status = 'pending' AND j.locked_until >= ${at}`),
      );
      const free = Math.min(concurrent - Number(busy?.n ?? 0), limit - claimed.length);
      if (free <= 0) continue;
      const rows = rowsOf<{ organization_id: string; id: string }>(
        await tx.execute(sql`
          SELECT j.organization_id, j.id FROM quickbooks_sync_jobs j
          WHERE j.status = 'pending' AND j.next_attempt_at <= ${at}
            AND (j.locked_until IS NULL OR j.locked_until < ${at})
            AND j.organization_id IN (SELECT c.organization_id FROM quickbooks_connections c
                                      WHERE c.realm_id = ${realm} AND c.status = 'connected')
            AND NOT EXISTS (SELECT 1 FROM quickbooks_sync_jobs o
                            WHERE o.organization_id = j.organization_id AND o.entity = j.entity
                              AND o.entity_id = j.entity_id AND o.status = 'pending'
                              AND (o.created_at, o.id) < (j.created_at, j.id))
          ORDER BY j.next_attempt_at, j.created_at, j.id
          LIMIT ${free}
          FOR UPDATE OF j SKIP LOCKED`),
      );
      for (const r of rows) {
        const [row] = await tx
          .update(quickbooksSyncJobs)
          .set({ lockedUntil: until, attempts: sql`${quickbooksSyncJobs.attempts} + 1`, updatedAt: now })
          .where(and(eq(quickbooksSyncJobs.organizationId, r.organization_id), eq(quickbooksSyncJobs.id, r.id)))
          .returning();
        if (row) claimed.push(row);
      }
    }
    return claimed;
  });
}

/**
 * Whether a later change of the same record is waiting: this one is then passed over (the later
 * carries the whole record). The job's own created_at is read in the statement: a JavaScript Date
 * would cut its microseconds and find the job later than itself.
 */
export async function superseded(database: Database, job: JobRow): Promise<boolean> {
  const rows = await inTenant(database.db, job.organizationId, SYNC_ACTOR, (ctx) =>
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
export async function roundOf(database: Database, job: JobRow): Promise<number> {
  const rows = await inTenant(database.db, job.organizationId, SYNC_ACTOR, (ctx) =>
    ctx.tx.execute(sql`
      SELECT coalesce(max(create_round), 0) AS n FROM quickbooks_sync_jobs
      WHERE organization_id = ${job.organizationId} AND entity = ${job.entity} AND entity_id = ${job.entityId}`),
  );
  return Number(rowsOf<{ n: number | string }>(rows)[0]?.n ?? 0);
}

export async function finish(database: Database, job: JobRow, result: Result, now: Date): Promise<void> {
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
  await inTenant(database.db, job.organizationId, SYNC_ACTOR, (ctx) =>
    ctx.tx
      .update(quickbooksSyncJobs)
      .set({ ...set, lockedUntil: null, updatedAt: new Date() })
      .where(where),
  );
}
