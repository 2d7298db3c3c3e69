import { and, count, eq, sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { events, ledgerEntries, ledgerLines } from '../../src/db/schema/index.js';
import type { Harness, TestUser } from '../harness.js';

/*
 * Purchasing test helpers. Reads go straight to the database (as the test
 * superuser) so checks do not depend on the routes under test.
 */

export async function newVendor(owner: TestUser, fields: Record<string, unknown> = {}) {
  const res = await owner.call('POST', '/api/vendors', { name: 'Green Valley Mulch', ...fields });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { id: string; name: string };
}

export async function newBill(owner: TestUser, vendorId: string, amount = 100, extra: Record<string, unknown> = {}) {
  const res = await owner.call('POST', '/api/bills', {
    vendorId,
    lineItems: [{ description: 'Mulch', amount }],
    ...extra,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { id: string; billNumber: string; status: string; balance: number; total: number };
}

export const pay = (owner: TestUser, vendorId: string, allocations: { billId: string; amount: number }[], extra = {}) =>
  owner.call('POST', '/api/bill-payments', { vendorId, method: 'ach', allocations, ...extra });

/** Per-account balance in cents, debit minus credit, over every entry of the organization. */
export async function accountBalances(h: Harness, organizationId: string): Promise<Map<string, number>> {
  const rows = await h.admin.db
    .select({
      code: ledgerLines.accountCode,
      net: sql<string>`sum(${ledgerLines.debitCents} - ${ledgerLines.creditCents})`,
    })
    .from(ledgerLines)
    .where(eq(ledgerLines.organizationId, organizationId))
    .groupBy(ledgerLines.accountCode);
  return new Map(rows.map((r) => [r.code, Number(r.net)]));
}

/** Rows in the tables a refused request must not touch: outbox events and ledger entries. */
export async function sideEffects(h: Harness, organizationId: string) {
  const [e] = await h.admin.db.select({ n: count() }).from(events).where(eq(events.organizationId, organizationId));
  const [l] = await h.admin.db
    .select({ n: count() })
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.organizationId, organizationId)));
  return { events: Number(e?.n), entries: Number(l?.n) };
}

/** Asserts a refusal: status, the field named, and nothing written (no event, no ledger entry). */
export async function expectRefused(
  h: Harness,
  owner: TestUser,
  run: () => Promise<{ statusCode: number; body: string; json(): unknown }>,
  status: number,
  field?: string,
) {
  const before = await sideEffects(h, owner.organizationId);
  const res = await run();
  expect(res.statusCode, res.body).toBe(status);
  if (field) expect(res.body).toContain(field);
  expect(await sideEffects(h, owner.organizationId)).toEqual(before);
  return res;
}
