import { sql } from 'drizzle-orm';
import { documentCounters } from '../../db/schema/index.js';
import type { Ctx } from '../../platform/tenancy.js';

export type DocumentKind = 'invoice' | 'estimate' | 'purchase_order' | 'bill';
const PREFIX: Record<DocumentKind, string> = { invoice: 'INV', estimate: 'EST', purchase_order: 'PO', bill: 'BILL' };

/**
 * The next human-readable number (INV-000001, EST-000001, PO-000001, BILL-000001) for this organization.
 * The upsert takes the counter row's lock until the caller's transaction ends, so
 * concurrent creators queue on it; a rollback returns the number. Call it after
 * validation so the lock is held only while writing.
 */
export async function nextDocumentNumber(ctx: Ctx, kind: DocumentKind): Promise<string> {
  const [row] = await ctx.tx
    .insert(documentCounters)
    .values({ organizationId: ctx.organizationId, kind, lastValue: 1 })
    .onConflictDoUpdate({
      target: [documentCounters.organizationId, documentCounters.kind],
      set: { lastValue: sql`${documentCounters.lastValue} + 1` },
    })
    .returning({ value: documentCounters.lastValue });
  return `${PREFIX[kind]}-${String(row?.value).padStart(6, '0')}`;
}
