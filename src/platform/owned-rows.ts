import { and, asc, eq, getTableColumns, inArray, type SQL, sql } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import { notFound } from './errors.js';
import type { Ctx } from './tenancy.js';

type OwnedTable = PgTable & { id: PgColumn; organizationId: PgColumn };

/**
 * One row of an organization's table by id, the lookup every module with its own tables
 * needs: `mine` is the condition, `find` reads the row, FOR UPDATE when it is about to
 * change, or answers 404 naming `label`. `shown` narrows the rows a lookup may find (a
 * payment intent Stripe has not answered for yet is not shown).
 */
export function ownedRows<T extends OwnedTable>(table: T, label: string, shown?: SQL) {
  const mine = (ctx: Ctx, id: string): SQL =>
    and(eq(table.organizationId, ctx.organizationId), eq(table.id, id)) as SQL;
  async function find(ctx: Ctx, id: string, lock = false): Promise<T['$inferSelect']> {
    const query = ctx.tx
      .select()
      .from(table as PgTable)
      .where(shown ? and(mine(ctx, id), shown) : mine(ctx, id));
    const [row] = lock ? await query.for('update') : await query;
    if (!row) throw notFound(label);
    return row as T['$inferSelect'];
  }
  return { mine, find };
}

/**
 * A document's lines, in their own table whose `parent` column names the document: `of`
 * reads the lines of several documents in one query, in position order, every id with an
 * entry; `clear` deletes one document's lines before its new ones are inserted.
 */
export function documentLineRows<T extends OwnedTable & { position: PgColumn }, K extends string>(
  table: T,
  parent: K & keyof T['$inferSelect'],
) {
  type Row = T['$inferSelect'];
  const parentColumn = getTableColumns(table)[parent] as PgColumn;
  async function of(ctx: Ctx, ids: string[]): Promise<Map<string, Row[]>> {
    const byParent = new Map<string, Row[]>(ids.map((id) => [id, []]));
    if (ids.length === 0) return byParent;
    const rows = (await ctx.tx
      .select()
      .from(table as PgTable)
      .where(and(eq(table.organizationId, ctx.organizationId), inArray(parentColumn, ids)))
      .orderBy(asc(parentColumn), asc(table.position))) as Row[];
    for (const row of rows) byParent.get(row[parent] as string)?.push(row);
    return byParent;
  }
  return {
    of,
    /** One document's lines, in position order. */
    async ofOne(ctx: Ctx, id: string): Promise<Row[]> {
      return (await of(ctx, [id])).get(id) ?? [];
    },
    async clear(ctx: Ctx, id: string): Promise<void> {
      await ctx.tx
        .delete(table as PgTable)
        .where(and(eq(table.organizationId, ctx.organizationId), eq(parentColumn, id)));
    },
  };
}

/**
 * Nulls `column` (a reference to another table) in this organization's rows of `table` that
 * point at one of `ids`: what `ON DELETE SET NULL` did before drizzle/0038. Citus refuses SET
 * NULL on a foreign key that carries the organization, so the module owning `table` calls this
 * before the referenced rows are deleted, in the deleting transaction (flows/delete-*.ts). The
 * rows keep living with a null reference, as they did; `updated_at` is left as it was.
 */
export async function clearReferences(ctx: Ctx, table: PgTable, column: PgColumn, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await ctx.tx.execute(
    sql`UPDATE ${table} SET ${sql.identifier(column.name)} = NULL
        WHERE organization_id = ${ctx.organizationId} AND ${inArray(column, ids)}`,
  );
}
