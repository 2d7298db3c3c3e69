import { count, desc, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Tx } from '../db/client.js';
import type { Page } from './pagination.js';

/**
 * One page of a tenant list, newest first (createdAt, then id), with the total
 * for X-Total-Count: the list query every resource without its own order shares.
 */
export async function newestFirst<T extends PgTable & { createdAt: PgColumn; id: PgColumn }>(
  tx: Tx,
  table: T,
  where: SQL | undefined,
  page: Page,
): Promise<{ rows: T['$inferSelect'][]; total: number }> {
  const [counted] = await tx
    .select({ n: count() })
    .from(table as PgTable)
    .where(where);
  const rows = (await tx
    .select()
    .from(table as PgTable)
    .where(where)
    .orderBy(desc(table.createdAt), desc(table.id))
    .limit(page.limit)
    .offset(page.offset)) as T['$inferSelect'][];
  return { rows, total: Number(counted?.n ?? 0) };
}
