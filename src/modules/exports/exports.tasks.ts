import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, type Writable } from 'node:stream';
import { and, asc, eq, isNotNull, lt, sql } from 'drizzle-orm';
import yazl from 'yazl';
import type { WorkerTask } from '../../background/runner.js';
import type { Database } from '../../db/client.js';
import { dataExports } from '../../db/schema/index.js';
import { asPlatform } from '../../platform/cross-tenant.js';
import { AppError } from '../../platform/errors.js';
import type { Page } from '../../platform/pagination.js';
import { inTenant, systemActor } from '../../platform/tenancy.js';
import { csvColumns, csvRecord, csvRow, itemSchemaOf, restShape } from './exports.format.js';
import { type ExportResource, exportResource } from './exports.registry.js';
import { EXPORT_TTL_MS, type ExportRow } from './exports.service.js';

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
  const fileName = `${job.id}.zip`;
  const partial = join(dir, `${fileName}.partial`);

  const totalRows = await inTenant(database.db, org, ACTOR, async (ctx) => {
    let total = 0;
    for (const r of resources) total += (await r.list(ctx, pageAfter(undefined, 1, true))).total ?? 0;
    await ctx.tx.update(dataExports).set({ totalRows: total, updatedAt: new Date() }).where(eq(dataExports.id, job.id));
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
  await inTenant(database.db, org, ACTOR, (ctx) =>
    ctx.tx
      .update(dataExports)
      .set({
        status: 'completed',
        rows,
        totalRows: Math.max(rows, totalRows),
        sizeBytes: size,
        fileName,
        completedAt,
        expiresAt: new Date(completedAt.getTime() + EXPORT_TTL_MS),
        updatedAt: completedAt,
      })
      .where(eq(dataExports.id, job.id)),
  );
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
        await ctx.tx
          .update(dataExports)
          .set({ rows: rowsBefore + found.rows.length, updatedAt: new Date() })
          .where(eq(dataExports.id, job.id));
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
      .where(eq(dataExports.status, 'queued'))
      .orderBy(asc(dataExports.createdAt))
      .limit(5),
  );
  for (const c of candidates) {
    const [claimed] = await inTenant(database.db, c.organizationId, ACTOR, (ctx) =>
      ctx.tx
        .update(dataExports)
        .set({
          status: 'running',
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
    const message = err instanceof Error ? err.message : String(err);
    await inTenant(database.db, job.organizationId, ACTOR, (ctx) =>
      ctx.tx
        .update(dataExports)
        .set({ status: 'failed', error: message.slice(0, 1000), updatedAt: new Date() })
        .where(eq(dataExports.id, job.id)),
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
  const stale = await asPlatform(database.db, (tx) =>
    tx
      .select({ id: dataExports.id, organizationId: dataExports.organizationId, attempts: dataExports.attempts })
      .from(dataExports)
      .where(and(eq(dataExports.status, 'running'), lt(dataExports.updatedAt, new Date(now.getTime() - STALE_MS))))
      .limit(100),
  );
  for (const s of stale) {
    const retry = s.attempts < MAX_ATTEMPTS;
    await inTenant(database.db, s.organizationId, ACTOR, (ctx) =>
      ctx.tx
        .update(dataExports)
        .set(
          retry
            ? { status: 'queued', rows: 0, updatedAt: now }
            : { status: 'failed', error: 'The worker stopped during the export too often', updatedAt: now },
        )
        .where(
          and(
            eq(dataExports.organizationId, ctx.organizationId),
            eq(dataExports.id, s.id),
            eq(dataExports.status, 'running'),
          ),
        ),
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
