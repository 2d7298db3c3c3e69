import { and, asc, count, desc, eq, type SQL, sql } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Tx } from '../db/client.js';
import { type Page, type PageResult, unknownCursor } from './pagination.js';

/**
 * Keyset pagination, written once (operations.md §1). A list's order is a tuple of
 * columns ending in `id`, all in one direction, so it is total; a cursor page is the
 * range strictly after the cursor row's tuple, which an index led by
 * `organization_id` in that order serves as a range scan at any depth.
 */
export interface ListOrder {
  /** The order columns, all NOT NULL, the last one being the table's `id`. */
  columns: PgColumn[];
  direction: 'asc' | 'desc';
}

/**
 * `(c1, …, id) < (SELECT c1, …, id FROM t WHERE id = :cursor)` (or `>` ascending).
 * The cursor row is read inside the same statement, so its timestamps keep their
 * microseconds (a JavaScript Date would cut them to milliseconds and skip rows).
 * A cursor that names no row makes the comparison NULL: the page is empty, and
 * `pageOfRows` then tells a finished walk from a bad cursor.
 */
export function afterCursor(
  table: PgTable,
  order: ListOrder,
  organizationColumn: PgColumn,
  organizationId: string,
  cursor: string,
): SQL {
  const cols = sql.join(
    order.columns.map((c) => sql.identifier(c.name)),
    sql`, `,
  );
  // A NULL in the tuple makes the comparison NULL and would silently end a walk early.
  const nullable = order.columns.find((c) => !c.notNull);
  if (nullable) throw new Error(`list order column ${nullable.name} must be NOT NULL`);
  const idColumn = order.columns[order.columns.length - 1] as PgColumn;
  const op = order.direction === 'desc' ? sql`<` : sql`>`;
  return sql`(${sql.join(order.columns, sql`, `)}) ${op} (SELECT ${cols} FROM ${table} WHERE ${sql.identifier(idColumn.name)} = ${cursor} AND ${sql.identifier(organizationColumn.name)} = ${organizationId})`;
}

export function orderOf(order: ListOrder): SQL[] {
  return order.columns.map((c) => (order.direction === 'desc' ? desc(c) : asc(c)));
}

/**
 * Turns `limit + 1` fetched rows into a page: `hasMore` when the extra row came back.
 * An empty cursor page is checked once more: a cursor that names no row of this list
 * in the organization (unknown, another tenant's, another resource's) is a 400,
 * while a real cursor at the end of the list is simply an empty last page.
 */
export async function pageOfRows<T>(
  rows: T[],
  page: Page,
  cursorExists: () => Promise<boolean>,
): Promise<{ rows: T[]; hasMore: boolean }> {
  if (rows.length === 0 && page.startingAfter !== undefined && !(await cursorExists())) throw unknownCursor();
  const hasMore = rows.length > page.limit;
  return { rows: hasMore ? rows.slice(0, page.limit) : rows, hasMore };
}

type ListTable = PgTable & { id: PgColumn; organizationId: PgColumn };

/** Whether `id` names a row of `table` in the current tenant (soft-deleted rows included). */
export async function rowExists(tx: Tx, table: ListTable, organizationId: string, id: string): Promise<boolean> {
  const found = await tx
    .select({ id: table.id })
    .from(table as PgTable)
    .where(and(eq(table.id, id), eq(table.organizationId, organizationId)))
    .limit(1);
  return found.length > 0;
}

/** The count for `X-Total-Count`, only when the request asked for it. */
export async function totalIfAsked(tx: Tx, table: PgTable, where: SQL | undefined, page: Page) {
  if (!page.includeTotal) return undefined;
  const [counted] = await tx.select({ n: count() }).from(table).where(where);
  return Number(counted?.n ?? 0);
}

/**
 * One page of a tenant list in `order` (default newest first: createdAt, then id),
 * page or cursor style: the list query that every resource with a plain table shares.
 * `where` must name the organization (RLS enforces it again).
 */
export async function listPage<T extends ListTable & { createdAt: PgColumn }>(
  tx: Tx,
  organizationId: string,
  table: T,
  where: SQL | undefined,
  page: Page,
  order: ListOrder = { columns: [table.createdAt, table.id], direction: 'desc' },
): Promise<PageResult<T['$inferSelect']>> {
  const range =
    page.startingAfter === undefined
      ? where
      : and(where, afterCursor(table, order, table.organizationId, organizationId, page.startingAfter));
  const fetched = (await tx
    .select()
    .from(table as PgTable)
    .where(range)
    .orderBy(...orderOf(order))
    .limit(page.limit + 1)
    .offset(page.offset)) as T['$inferSelect'][];
  const { rows, hasMore } = await pageOfRows(fetched, page, () =>
    rowExists(tx, table, organizationId, page.startingAfter as string),
  );
  return { rows, hasMore, total: await totalIfAsked(tx, table, where, page) };
}
