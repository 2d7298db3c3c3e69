import { and, desc, eq, isNull, type SQL } from 'drizzle-orm';
import { deviceTokens } from '../../db/schema/index.js';
import { hashApiKey } from '../../platform/auth/principal.js';
import { bumpAuthGeneration } from '../../platform/auth/revocations.js';
import { forgetSecret, recordSecret } from '../../platform/auth/secret-lookups.js';
import { notFound } from '../../platform/errors.js';
import { newId, randomToken } from '../../platform/ids.js';
import type { Ctx } from '../../platform/tenancy.js';
import { callerMember, isAdmin, targetMember } from './crew-tracking.refs.js';

type Row = typeof deviceTokens.$inferSelect;
const view = (r: Row) => ({
  id: r.id,
  name: r.name,
  memberId: r.memberId,
  userId: r.userId,
  prefix: r.prefix,
  createdAt: r.createdAt,
  lastUsedAt: r.lastUsedAt,
});

/** Like API keys: 256 random bits, shown once, only the SHA-256 kept. */
export async function createDevice(ctx: Ctx, input: { name: string; memberId?: string | undefined }) {
  const member = await targetMember(ctx, input.memberId);
  const token = `dev_${randomToken(32)}`;
  const tokenHash = hashApiKey(token);
  const [row] = await ctx.tx
    .insert(deviceTokens)
    .values({
      id: newId('dvc'),
      organizationId: ctx.organizationId,
      memberId: member.id,
      userId: member.userId,
      name: input.name.trim(),
      tokenHash,
      prefix: token.slice(0, 10),
      createdBy: ctx.actor.id,
    })
    .returning();
  // The global lookup that finds this token's organization when a device presents it (same transaction).
  await recordSecret(ctx.tx, 'device_token', tokenHash);
  return { ...view(row as Row), token };
}

/** Owner/admin see every active device; a member sees their own. */
async function visible(ctx: Ctx): Promise<SQL> {
  const base = and(eq(deviceTokens.organizationId, ctx.organizationId), isNull(deviceTokens.revokedAt)) as SQL;
  if (isAdmin(ctx)) return base;
  const me = await callerMember(ctx);
  return and(base, eq(deviceTokens.memberId, me.id)) as SQL;
}

export async function listDevices(ctx: Ctx) {
  const rows = await ctx.tx
    .select()
    .from(deviceTokens)
    .where(await visible(ctx))
    .orderBy(desc(deviceTokens.createdAt), desc(deviceTokens.id));
  return rows.map(view);
}

export async function revokeDevice(ctx: Ctx, id: string) {
  const rows = await ctx.tx
    .update(deviceTokens)
    .set({ revokedAt: new Date() })
    .where(and(await visible(ctx), eq(deviceTokens.id, id)))
    .returning({ tokenHash: deviceTokens.tokenHash });
  if (rows.length === 0) throw notFound('Device');
  await forgetSecret(ctx.tx, 'device_token', (rows[0] as { tokenHash: string }).tokenHash);
  await bumpAuthGeneration(ctx.tx);
}
