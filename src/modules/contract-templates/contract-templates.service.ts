import { and, eq } from 'drizzle-orm';
import { contractTemplates } from '../../db/schema/index.js';
import { invalidField, notFound } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import type { Ctx } from '../../platform/tenancy.js';
import { placeholdersIn, unknownPlaceholders } from './template-render.js';

type Row = typeof contractTemplates.$inferSelect;
export const templateView = (r: Row) => ({
  id: r.id,
  name: r.name,
  body: r.body,
  placeholders: placeholdersIn(r.body),
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

function checkBody(body: string) {
  const unknown = unknownPlaceholders(body);
  if (unknown.length > 0)
    throw invalidField('body', `unknown placeholder ${unknown.map((u) => `{{${u}}}`).join(', ')}`);
}

const byId = (ctx: Ctx, id: string) =>
  and(eq(contractTemplates.organizationId, ctx.organizationId), eq(contractTemplates.id, id));

/** The template `id`, or 404 (URL) — or, with `field`, 400 naming the body field. */
export async function findTemplate(ctx: Ctx, id: string, field?: string): Promise<Row> {
  const [row] = await ctx.tx.select().from(contractTemplates).where(byId(ctx, id));
  if (!row) throw field ? invalidField(field, `no contract template ${id}`) : notFound('Contract template');
  return row;
}

export async function createTemplate(ctx: Ctx, input: { name: string; body: string }) {
  checkBody(input.body);
  const now = new Date();
  const [row] = await ctx.tx
    .insert(contractTemplates)
    .values({
      id: newId('ctp'),
      organizationId: ctx.organizationId,
      name: input.name.trim(),
      body: input.body,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  return templateView(row as Row);
}

export async function listTemplates(ctx: Ctx, page: Page) {
  const where = eq(contractTemplates.organizationId, ctx.organizationId);
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, contractTemplates, where, page);
  return { rows: rows.map(templateView), ...more };
}

export async function getTemplate(ctx: Ctx, id: string) {
  return templateView(await findTemplate(ctx, id));
}

export async function updateTemplate(
  ctx: Ctx,
  id: string,
  input: { name?: string | undefined; body?: string | undefined },
) {
  await findTemplate(ctx, id);
  if (input.body !== undefined) checkBody(input.body);
  const [row] = await ctx.tx
    .update(contractTemplates)
    .set({
      ...(input.name !== undefined ? { name: input.name.trim() } : {}),
      ...(input.body !== undefined ? { body: input.body } : {}),
      updatedAt: new Date(),
    })
    .where(byId(ctx, id))
    .returning();
  return templateView(row as Row);
}

/** Contracts made from it keep their text (a snapshot) and lose only the link. */
export async function deleteTemplate(ctx: Ctx, id: string) {
  const rows = await ctx.tx.delete(contractTemplates).where(byId(ctx, id)).returning({ id: contractTemplates.id });
  if (rows.length === 0) throw notFound('Contract template');
}
