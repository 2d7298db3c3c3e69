import { sql } from 'drizzle-orm';
import { rowsOf } from '../../db/client.js';
import { invoiceBillingKeys } from '../../db/schema/index.js';
import type { Ctx } from '../../platform/tenancy.js';

/*
 * The keys of background billing (invoice_billing_keys): a bill the worker makes is
 * claimed by its key before it is made, so two workers, or two processes, racing for it
 * make it once. A claim waits for a concurrent claimer of the same key to commit or roll
 * back (INSERT … ON CONFLICT DO NOTHING), then answers whether it won.
 */

/** The keys among `keys` that exist already (made, or being made by a committed claim). */
export async function existingBillingKeys(ctx: Ctx, keys: string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = rowsOf<{ key: string }>(
    await ctx.tx.execute(sql`SELECT key FROM invoice_billing_keys
      WHERE organization_id = ${ctx.organizationId} AND key = ANY(${sql.param(keys)}::text[])`),
  );
  return new Set(rows.map((r) => r.key));
}

/** Claims the keys in one statement; answers those this transaction won. */
export async function claimBillingKeys(ctx: Ctx, keys: string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const won = await ctx.tx
    .insert(invoiceBillingKeys)
    .values(keys.map((key) => ({ organizationId: ctx.organizationId, key })))
    .onConflictDoNothing()
    .returning({ key: invoiceBillingKeys.key });
  return new Set(won.map((r) => r.key));
}

/** Points claimed keys at the invoices made for them, in one statement. */
export async function recordBillingKeys(ctx: Ctx, made: Array<{ key: string; invoiceId: string }>): Promise<void> {
  if (made.length === 0) return;
  const values = sql.join(
    made.map((m) => sql`(${m.key}, ${m.invoiceId})`),
    sql`, `,
  );
  await ctx.tx.execute(sql`UPDATE ${invoiceBillingKeys} SET invoice_id = v.invoice_id
    FROM (VALUES ${values}) AS v(key, invoice_id)
    WHERE ${invoiceBillingKeys.organizationId} = ${ctx.organizationId} AND ${invoiceBillingKeys.key} = v.key`);
}
