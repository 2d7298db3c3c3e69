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
  return (await nextDocumentNumbers(ctx, kind, 1))[0] as string;
}

/** `count` consecutive numbers in one step of the counter (several documents made at once). */
export async function nextDocumentNumbers(ctx: Ctx, kind: DocumentKind, count: number): Promise<string[]> {
  const [row] = await ctx.tx
    .insert(documentCounters)
    .values({ organizationId: ctx.organizationId, kind, lastValue: count })
    .onConflictDoUpdate({
      target: [documentCounters.organizationId, documentCounters.kind],
      set: { lastValue: sql`${documentCounters.lastValue} + ${count}` },
    })
    .returning({ value: documentCounters.lastValue });
  const last = Number(row?.value);
  return Array.from({ length: count }, (_, i) => `${PREFIX[kind]}-${String(last - count + 1 + i).padStart(6, '0')}`);
}
