import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { dataExports } from '../../db/schema/index.js';
import { AppError, invalidState } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { ownedRows } from '../../platform/owned-rows.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import type { Ctx } from '../../platform/tenancy.js';
import { EXPORT_RESOURCE_NAMES } from './exports.registry.js';
import type { CreateExportBodyT, ExportStatus, ExportViewT } from './exports.schemas.js';

/** Archives are kept this long after completion (operations.md §7). */
export const EXPORT_TTL_MS = 7 * 24 * 3600 * 1000;

export type ExportRow = typeof dataExports.$inferSelect;

export function exportView(r: ExportRow): ExportViewT {
  const status = r.status as ExportStatus;
  const total = r.totalRows;
  const percent =
    status === 'completed' ? 100 : total === null || total === 0 ? 0 : Math.min(99, Math.floor((r.rows / total) * 100));
  return {
    id: r.id,
    status,
    format: r.format as ExportViewT['format'],
    resources: r.resources,
    progress: { rows: r.rows, totalRows: total, percent },
    sizeBytes: r.sizeBytes,
    expiresAt: r.expiresAt,
    createdAt: r.createdAt,
  };
}

/** Queues an export; the worker picks it up (exports.tasks.ts). Resources in registry order. */
export async function createExport(ctx: Ctx, input: CreateExportBodyT): Promise<ExportViewT> {
  const wanted = new Set(input.resources ?? EXPORT_RESOURCE_NAMES);
  for (const name of wanted) {
    // The body schema already refuses unknown names; this keeps the service safe on its own.
    if (!EXPORT_RESOURCE_NAMES.includes(name)) {
      throw new AppError('VALIDATION_FAILED', `Unknown resource ${name}`, {
        details: [{ field: 'resources', message: `unknown resource ${name}` }],
      });
    }
  }
  const [row] = await ctx.tx
    .insert(dataExports)
    .values({
      id: newId('exp'),
      organizationId: ctx.organizationId,
      status: 'queued',
      format: input.format,
      resources: EXPORT_RESOURCE_NAMES.filter((n) => wanted.has(n)),
      requestedBy: ctx.actor.id,
    })
    .returning();
  return exportView(row as ExportRow);
}

const findExport = ownedRows(dataExports, 'Export').find;

export const loadExport = (ctx: Ctx, id: string): Promise<ExportRow> => findExport(ctx, id);

export async function getExport(ctx: Ctx, id: string) {
  return exportView(await loadExport(ctx, id));
}

export async function listExports(ctx: Ctx, page: Page) {
  const { rows, ...more } = await listPage(
    ctx.tx,
    ctx.organizationId,
    dataExports,
    eq(dataExports.organizationId, ctx.organizationId),
    page,
  );
  return { rows: rows.map(exportView), ...more };
}

/** The archive to send: 409 before completion, 410 once expired (or its file is gone). */
export async function exportArchive(ctx: Ctx, id: string, dir: string, now = new Date()) {
  const row = await loadExport(ctx, id);
  if (row.status !== 'completed') {
    throw invalidState(`The export is ${row.status}; download it once it is completed`);
  }
  if (!row.fileName || (row.expiresAt && row.expiresAt.getTime() <= now.getTime())) {
    throw new AppError('GONE', 'The export has expired (archives are kept 7 days); request a new one');
  }
  const path = join(dir, row.fileName);
  const info = await stat(path).catch(() => null);
  if (!info) throw new AppError('GONE', 'The export archive is no longer available; request a new one');
  return { stream: createReadStream(path), size: info.size, filename: `export-${row.id}.zip` };
}
