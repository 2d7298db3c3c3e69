import { and, asc, eq } from 'drizzle-orm';
import { customerSmsConsents, customers } from '../../db/schema/index.js';
import { emit } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import type { Ctx } from '../../platform/tenancy.js';
import { anyCustomer, liveCustomer } from './customers.rows.js';
import type { SmsConsentSource } from './customers.schemas.js';
import { customerView } from './customers.service.js';

/*
 * SMS consent as a record, not a flag (operations.md §10): every change is a row of
 * customer_sms_consents with its source and evidence, and the customer row keeps the latest
 * (`smsConsent` in its view) so a send can check it without reading the history. A change to the
 * status it already has records nothing (a repeated STOP is a no-op).
 */

export type ConsentChange = { status: 'opted_in' | 'opted_out'; source: SmsConsentSource; evidence?: string | null };

type Row = typeof customers.$inferSelect;

/** Records `change` for a live customer; returns whether anything changed. Emits customer.updated when it did. */
export async function recordSmsConsent(ctx: Ctx, customerId: string, change: ConsentChange): Promise<boolean> {
  const current = await liveCustomer.find(ctx, customerId, true);
  if (current.smsConsent === change.status) return false;
  const at = new Date();
  await ctx.tx.insert(customerSmsConsents).values({
    id: newId('smc'),
    organizationId: ctx.organizationId,
    customerId,
    status: change.status,
    source: change.source,
    evidence: change.evidence?.trim() || null,
    phoneE164: current.phoneE164,
    createdAt: at,
  });
  const [row] = await ctx.tx
    .update(customers)
    .set({ smsConsent: change.status, smsConsentSource: change.source, smsConsentAt: at, updatedAt: at })
    .where(anyCustomer.mine(ctx, customerId))
    .returning();
  const view = customerView(row as Row);
  await emit(ctx, 'customer.updated', { customerId, customer: view });
  return true;
}

/** Every consent change of a live customer, oldest first (404 when the customer is unknown). */
export async function smsConsentHistory(ctx: Ctx, customerId: string) {
  await liveCustomer.find(ctx, customerId);
  const rows = await ctx.tx
    .select()
    .from(customerSmsConsents)
    .where(
      and(eq(customerSmsConsents.organizationId, ctx.organizationId), eq(customerSmsConsents.customerId, customerId)),
    )
    .orderBy(asc(customerSmsConsents.createdAt), asc(customerSmsConsents.id));
  return rows.map((r) => ({
    status: r.status as ConsentChange['status'],
    source: r.source as SmsConsentSource,
    evidence: r.evidence,
    at: r.createdAt,
  }));
}
