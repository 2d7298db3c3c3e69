import { and, eq, isNull } from 'drizzle-orm';
import { apiKeys } from '../../db/schema/index.js';
import { hashApiKey } from '../../platform/auth/principal.js';
import { bumpAuthGeneration } from '../../platform/auth/revocations.js';
import { forgetSecret, recordSecret } from '../../platform/auth/secret-lookups.js';
import { AppError, notFound } from '../../platform/errors.js';
import { newId, randomToken } from '../../platform/ids.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import type { Ctx } from '../../platform/tenancy.js';

type Row = typeof apiKeys.$inferSelect;
const view = (r: Row) => ({
  id: r.id,
  name: r.name,
  role: r.role as 'admin' | 'member',
  prefix: r.prefix,
  createdAt: r.createdAt,
  lastUsedAt: r.lastUsedAt,
});

/** The key is shown once; only its SHA-256 is stored (a key has 256 random bits, so no slow hash is needed). */
export async function createApiKey(ctx: Ctx, input: { name: string; role?: 'admin' | 'member' | undefined }) {
  if (ctx.actor.kind === 'apiKey') throw new AppError('FORBIDDEN', 'API keys cannot create API keys');
  const key = `sk_${randomToken(32)}`;
  const keyHash = hashApiKey(key);
  const [row] = await ctx.tx
    .insert(apiKeys)
    .values({
      id: newId('key'),
      organizationId: ctx.organizationId,
      name: input.name.trim(),
      role: input.role ?? 'admin',
      keyHash,
      prefix: key.slice(0, 10),
      createdBy: ctx.actor.id,
    })
    .returning();
  // The global lookup that finds this key's organization when the key is presented (same transaction).
  await recordSecret(ctx.tx, 'api_key', keyHash);
  return { ...view(row as Row), key };
}

/** Active keys, newest first (operations.md §1; a revoked key still works as a cursor). */
export async function listApiKeys(ctx: Ctx, page: Page) {
  const where = and(eq(apiKeys.organizationId, ctx.organizationId), isNull(apiKeys.revokedAt));
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, apiKeys, where, page);
  return { rows: rows.map(view), ...more };
}

export async function revokeApiKey(ctx: Ctx, id: string) {
  const rows = await ctx.tx
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiKeys.organizationId, ctx.organizationId), eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
    .returning({ keyHash: apiKeys.keyHash });
  if (rows.length === 0) throw notFound('API key');
  await forgetSecret(ctx.tx, 'api_key', (rows[0] as { keyHash: string }).keyHash);
  await bumpAuthGeneration(ctx.tx);
}
