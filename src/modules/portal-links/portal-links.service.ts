/*
 * Customer links: the tokens that open one document in the customer portal. Below the
 * portal and the document modules, so billing, invoices, estimates and contracts make
 * links and record views here without importing the portal (which uses jobs and payments).
 */
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { portalTokens } from '../../db/schema/index.js';
import { hashSecret, organizationOfSecret, recordSecret } from '../../platform/auth/secret-lookups.js';
import { asPlatform } from '../../platform/cross-tenant.js';
import { notFound } from '../../platform/errors.js';
import { newId, randomToken } from '../../platform/ids.js';
import type { Ctx } from '../../platform/tenancy.js';

export type PortalDocumentType = 'invoice' | 'estimate' | 'contract';

const DEFAULT_TTL_DAYS = 60;

/**
 * Issues a customer link for one document. The token has 256 random bits and is
 * stored hashed, so a database leak does not leak working links.
 */
export async function createPortalLink(
  ctx: Ctx,
  baseUrl: string,
  documentType: PortalDocumentType,
  documentId: string,
  ttlDays = DEFAULT_TTL_DAYS,
): Promise<{ token: string; url: string; expiresAt: Date }> {
  const token = `pt_${randomToken(32)}`;
  const expiresAt = new Date(Date.now() + ttlDays * 86_400_000);
  const tokenHash = hashSecret(token);
  await ctx.tx.insert(portalTokens).values({
    id: newId('ptk'),
    organizationId: ctx.organizationId,
    tokenHash,
    documentType,
    documentId,
    expiresAt,
  });
  // The global lookup that finds this link's organization when the customer opens it (same transaction).
  await recordSecret(ctx.tx, 'portal_token', tokenHash);
  return { token, url: `${baseUrl}/api/portal/${token}`, expiresAt };
}

/**
 * The token's row: the global lookup table names its organization, then the row is read within
 * it (operations.md §13). A platform read across tenants (the token is what names the tenant); a
 * mapping whose row is gone finds nothing, answered as an unknown link.
 */
async function tokenRow(db: Db, token: string) {
  const tokenHash = hashSecret(token);
  return asPlatform(db, async (tx) => {
    const organizationId = await organizationOfSecret(tx, 'portal_token', tokenHash);
    if (organizationId === undefined) return undefined;
    const [row] = await tx
      .select()
      .from(portalTokens)
      .where(and(eq(portalTokens.organizationId, organizationId), eq(portalTokens.tokenHash, tokenHash)));
    return row;
  });
}

export interface PortalTarget {
  tokenId: string;
  organizationId: string;
  documentType: PortalDocumentType;
  documentId: string;
}

/**
 * Finds the document a token opens. A platform lookup across tenants (the token
 * is what names the tenant); unknown, malformed and expired tokens are all 404.
 */
export async function resolvePortalToken(db: Db, token: string): Promise<PortalTarget> {
  if (!/^pt_[A-Za-z0-9_-]{20,100}$/.test(token)) throw notFound('Document');
  const row = await tokenRow(db, token);
  if (!row || row.expiresAt.getTime() <= Date.now()) throw notFound('Document');
  return {
    tokenId: row.id,
    organizationId: row.organizationId,
    documentType: row.documentType as PortalDocumentType,
    documentId: row.documentId,
  };
}

/**
 * Like resolvePortalToken, but tells an expired link from an unknown one, so the
 * customer page can say "ask for a new link" and name the company. Still a lookup
 * by the token's hash: only someone holding the link learns that it expired.
 */
export async function lookupPortalLink(db: Db, token: string): Promise<(PortalTarget & { expired: boolean }) | null> {
  if (!/^pt_[A-Za-z0-9_-]{20,100}$/.test(token)) return null;
  const row = await tokenRow(db, token);
  if (!row) return null;
  return {
    tokenId: row.id,
    organizationId: row.organizationId,
    documentType: row.documentType as PortalDocumentType,
    documentId: row.documentId,
    expired: row.expiresAt.getTime() <= Date.now(),
  };
}

/**
 * The customer opened a document through their link (`ctx.actor` is the portal
 * token): records when. The document modules call it from their portal handlers.
 */
export async function recordPortalView(ctx: Ctx): Promise<void> {
  if (ctx.actor.kind !== 'portal') return;
  await ctx.tx
    .update(portalTokens)
    .set({ lastViewedAt: new Date() })
    .where(and(eq(portalTokens.organizationId, ctx.organizationId), eq(portalTokens.id, ctx.actor.id)));
}
