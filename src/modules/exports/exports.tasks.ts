import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, type Writable } from 'node:stream';
import { and, asc, eq, inArray, isNotNull, lt, sql } from 'drizzle-orm';
import yazl from 'yazl';
import type { WorkerTask } from '../../background/runner.js';
import type { Database } from '../../db/client.js';
import { dataExports } from '../../db/schema/index.js';
import { asPlatform } from '../../platform/cross-tenant.js';
import { AppError } from '../../platform/errors.js';
import type { Page } from '../../platform/pagination.js';
import { statesAccepting, take } from '../../platform/state-machine.js';
import { type Ctx, inTenant, systemActor } from '../../platform/tenancy.js';
import { csvColumns, csvRecord, csvRow, itemSchemaOf, restShape } from './exports.format.js';
import { type ExportResource, exportResource } from './exports.registry.js';
import { EXPORT_TTL_MS, type ExportRow } from './exports.service.js';
import { exportMachine } from './exports.states.js';

const ACTOR = systemActor('exports.run');
/** Rows per page: each page is one tenant transaction, written to the zip before the next is read. */
export const EXPORT_PAGE_SIZE = 500;
/** A running export whose progress has not moved for this long lost its worker: queued again (or failed). */
const STALE_MS = 10 * 60 * 1000;
const MAX_ATTEMPTS = 3;

const pageAfter = (startingAfter: string | undefined, limit: number, includeTotal = false): Page => ({
  limit,
  page: 1,
  offset: 0,
  startingAfter,
  includeTotal,
});

async function write(out: Writable, chunk: string) {
  if (!out.write(chunk)) await once(out, 'drain');
}

export interface ExportHooks {
  /** Called after every page is written (tests sample memory, or change rows, here). */
  onPage?: (rowsSoFar: number, lastId: string | undefined) => void | Promise<void>;
}

/**
 * A run whose export was queued again (the sweep took it for dead) and claimed by another
 * run: it stops and leaves the row and the archive to the current run.
 */
export class SupersededRun extends Error {
  constructor(job: ExportRow) {
    super(`export ${job.id}: attempt ${job.attempts} was superseded by a later attempt`);
  }
}

/**
 * Every write of a run names its attempt (and that the export still runs): a run the
 * sweep gave up on while it was only slow changes nothing once another run has the export.
 */
const ofRun = (ctx: Ctx, job: Pick<ExportRow, 'id' | 'attempts'>) =>
  and(
    eq(dataExports.organizationId, ctx.organizationId),
    eq(dataExports.id, job.id),
    eq(dataExports.attempts, job.attempts),
    eq(dataExports.status, 'running'),
  );

/** Updates the run's row; throws SupersededRun when the row is no longer this run's. */
async function updateRun(ctx: Ctx, job: ExportRow, set: Partial<ExportRow>) {
  const updated = await ctx.tx.update(dataExports).set(set).where(ofRun(ctx, job)).returning({ id: dataExports.id });
  if (updated.length === 0) throw new SupersededRun(job);
}

const isUnknownCursor = (err: unknown) =>
  err instanceof AppError && err.code === 'VALIDATION_FAILED' && err.details?.some((d) => d.field === 'startingAfter');

/**
 * Writes one export: every resource walked by cursor, a page per tenant transaction
 * (progress recorded in the same transaction), each page written to the zip entry with
 * backpressure before the next is read, so memory holds one page whatever the size.
 * The archive is written under a temporary name and renamed once complete.
 */
export async function writeExport(database: Database, job: ExportRow, dir: string, hooks: ExportHooks = {}) {
  const org = job.organizationId;
  const resources = job.resources
    .map((name) => exportResource(name))
    .filter((r): r is ExportResource => r !== undefined);
  await mkdir(dir, { recursive: true });
  // One archive name per attempt: a superseded run's file never replaces the current one.
  const fileName = `${job.id}-${job.attempts}.zip`;
  const partial = join(dir, `${fileName}.partial`);

  const totalRows = await inTenant(database.db, org, ACTOR, async (ctx) => {
    let total = 0;
    for (const r of resources) total += (await r.list(ctx, pageAfter(undefined, 1, true))).total ?? 0;
    await updateRun(ctx, job, { totalRows: total, updatedAt: new Date() });
    return total;
  });

  const zip = new yazl.ZipFile();
  const file = createWriteStream(partial);
  const finished = new Promise<void>((resolve, reject) => {
    file.on('close', resolve);
    file.on('error', reject);
    zip.outputStream.on('error', reject);
  });
  zip.outputStream.pipe(file);
  const manifest: Array<{ resource: string; file: string; rows: number }> = [];
  let rows = 0;
  try {
    for (const resource of resources) {
      const entryName = `${resource.name}.${job.format}`;
      const entry = new PassThrough();
      zip.addReadStream(entry, entryName);
      const item = itemSchemaOf(resource.listResponse);
      const columns = job.format === 'csv' ? csvColumns(item) : [];
      if (job.format === 'csv') await write(entry, csvRecord(columns));
      // The ids of the last page, newest cursor first: if the last row was deleted since
      // (a live organization), the walk resumes after the row before it, which skips nothing
      // and repeats nothing.
      let cursors: Array<string | undefined> = [undefined];
      let count = 0;
      for (;;) {
        const page = await nextPage(database, job, resource, cursors, rows);
        let chunk = '';
        for (const row of page.rows) {
          const shaped = restShape(item, row);
          chunk += job.format === 'csv' ? csvRow(columns, shaped) : `${JSON.stringify(shaped)}\n`;
        }
        if (chunk) await write(entry, chunk);
        rows += page.rows.length;
        count += page.rows.length;
        const last = page.rows.at(-1);
        await hooks.onPage?.(rows, last?.id);
        if (!page.hasMore || !last) break;
        cursors = page.rows.map((r) => r.id).reverse();
      }
      entry.end();
      manifest.push({ resource: resource.name, file: entryName, rows: count });
    }
    const info = { exportId: job.id, format: job.format, createdAt: job.createdAt, files: manifest };
    zip.addBuffer(Buffer.from(`${JSON.stringify(info, null, 2)}\n`), 'manifest.json');
    zip.end();
    await finished;
  } catch (err) {
    zip.outputStream.unpipe(file);
    file.destroy();
    await rm(partial, { force: true });
    throw err;
  }
  await rename(partial, join(dir, fileName));
  const { size } = await stat(join(dir, fileName));
  const completedAt = new Date();
  try {
    await inTenant(database.db, org, ACTOR, (ctx) =>
      updateRun(ctx, job, {
        status: take(exportMachine, 'running', 'complete'),
        rows,
        totalRows: Math.max(rows, totalRows),
        sizeBytes: size,
        fileName,
        completedAt,
        expiresAt: new Date(completedAt.getTime() + EXPORT_TTL_MS),
        updatedAt: completedAt,
      }),
    );
  } catch (err) {
    // Superseded meanwhile: the archive is no one's.
    await rm(join(dir, fileName), { force: true });
    throw err;
  }
  return { rows, sizeBytes: size, fileName };
}

/** One page after the first cursor that still names a row; progress recorded in the same transaction. */
async function nextPage(
  database: Database,
  job: ExportRow,
  resource: ExportResource,
  cursors: Array<string | undefined>,
  rowsBefore: number,
) {
  for (const [i, cursor] of cursors.entries()) {
    try {
      return await inTenant(database.db, job.organizationId, ACTOR, async (ctx) => {
        const found = await resource.list(ctx, pageAfter(cursor, EXPORT_PAGE_SIZE));
        await updateRun(ctx, job, { rows: rowsBefore + found.rows.length, updatedAt: new Date() });
        return found;
      });
    } catch (err) {
      if (!isUnknownCursor(err) || i === cursors.length - 1) throw err;
    }
  }
  throw new Error('export: no cursor to resume from');
}

/** Claims the oldest queued export (discovered across tenants, claimed inside its tenant); null when none. */
export async function claimNextExport(database: Database): Promise<ExportRow | null> {
  // Cross-tenant discovery only: which organization has a queued export. The claim and
  // the export itself run in that tenant's transactions.
  const candidates = await asPlatform(database.db, (tx) =>
    tx
      .select({ id: dataExports.id, organizationId: dataExports.organizationId })
      .from(dataExports)
      .where(inArray(dataExports.status, statesAccepting(exportMachine, 'claim')))
      .orderBy(asc(dataExports.createdAt))
      .limit(5),
  );
  for (const c of candidates) {
    const [claimed] = await inTenant(database.db, c.organizationId, ACTOR, (ctx) =>
      ctx.tx
        .update(dataExports)
        .set({
          status: take(exportMachine, 'queued', 'claim'),
          attempts: sql`${dataExports.attempts} + 1`,
          startedAt: new Date(),
          updatedAt: new Date(),
        })
        .where(
          and(
            eq(dataExports.organizationId, ctx.organizationId),
            eq(dataExports.id, c.id),
            eq(dataExports.status, 'queued'),
          ),
        )
        .returning(),
    );
    if (claimed) return claimed;
  }
  return null;
}

/** Runs the next queued export to completion (or failure). Returns 1 when one was run, else 0. */
export async function runNextExport(database: Database, dir: string, hooks: ExportHooks = {}): Promise<number> {
  const job = await claimNextExport(database);
  if (!job) return 0;
  try {
    await writeExport(database, job, dir, hooks);
  } catch (err) {
    if (err instanceof SupersededRun) return 1;
    const message = err instanceof Error ? err.message : String(err);
    // Conditional like every write of the run: a superseded run does not fail the current one.
    await inTenant(database.db, job.organizationId, ACTOR, (ctx) =>
      ctx.tx
        .update(dataExports)
        .set({ status: take(exportMachine, 'running', 'fail'), error: message.slice(0, 1000), updatedAt: new Date() })
        .where(ofRun(ctx, job)),
    );
  }
  return 1;
}

/**
 * Housekeeping across tenants: archives past their expiry are deleted (the row stays,
 * so a download answers 410), and running exports whose worker died are queued again
 * (failed after MAX_ATTEMPTS). Discovery through asPlatform; each change in its tenant.
 */
export async function sweepExports(database: Database, dir: string, now = new Date()): Promise<number> {
  const expired = await asPlatform(database.db, (tx) =>
    tx
      .select({ id: dataExports.id, organizationId: dataExports.organizationId, fileName: dataExports.fileName })
      .from(dataExports)
      .where(and(isNotNull(dataExports.fileName), lt(dataExports.expiresAt, now)))
      .limit(100),
  );
  let handled = 0;
  for (const e of expired) {
    if (e.fileName) await rm(join(dir, e.fileName), { force: true });
    await inTenant(database.db, e.organizationId, ACTOR, (ctx) =>
      ctx.tx
        .update(dataExports)
        .set({ fileName: null, updatedAt: now })
        .where(and(eq(dataExports.organizationId, ctx.organizationId), eq(dataExports.id, e.id))),
    );
    handled++;
  }
  const staleBefore = new Date(now.getTime() - STALE_MS);
  const stale = await asPlatform(database.db, (tx) =>
    tx
      .select({ id: dataExports.id, organizationId: dataExports.organizationId, attempts: dataExports.attempts })
      .from(dataExports)
      .where(and(eq(dataExports.status, 'running'), lt(dataExports.updatedAt, staleBefore)))
      .limit(100),
  );
  for (const s of stale) {
    const retry = s.attempts < MAX_ATTEMPTS;
    await inTenant(database.db, s.organizationId, ACTOR, (ctx) =>
      ctx.tx
        .update(dataExports)
        .set(
          retry
            ? { status: take(exportMachine, 'running', 'requeue'), rows: 0, updatedAt: now }
            : {
                status: take(exportMachine, 'running', 'fail'),
                error: 'The worker stopped during the export too often',
                updatedAt: now,
              },
        )
        // Still the same attempt, and still without progress since it was found.
        .where(and(ofRun(ctx, { id: s.id, attempts: s.attempts }), lt(dataExports.updatedAt, staleBefore))),
    );
    handled++;
  }
  return handled;
}

export const exportTasks: WorkerTask[] = [
  {
    name: 'exports.run',
    intervalMs: 5_000,
    run: (t) => runNextExport(t.database, t.config.exportDir),
  },
  {
    name: 'exports.sweep',
    intervalMs: 60 * 60 * 1000,
    run: (t) => sweepExports(t.database, t.config.exportDir),
  },
];
