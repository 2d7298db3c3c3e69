import { and, asc, eq, inArray, lte, type SQL } from 'drizzle-orm';
import { billPaymentAllocations, billPayments } from '../../db/schema/index.js';
import { today } from '../../platform/dates.js';
import { invalidField } from '../../platform/errors.js';
import { emit } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import { fromCents, toCents } from '../../platform/money.js';
import { ownedRows } from '../../platform/owned-rows.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import { statesAccepting, take } from '../../platform/state-machine.js';
import type { Ctx } from '../../platform/tenancy.js';
import { billNumbers } from '../bills/bills.refs.js';
import { applyPaymentToBill, billBalanceCents, lockBills, reversePaymentOnBill } from '../bills/bills.service.js';
import { acceptsBillPayment, type BillStatus } from '../bills/bills.states.js';
import { ACCOUNT } from '../ledger/ledger.accounts.js';
import { postEntry } from '../ledger/ledger.service.js';
import { getOrgSettings } from '../settings/settings.service.js';
import { requireVendor } from '../vendors/vendors.service.js';
import type { BillPaymentMethod, CreateBillPaymentInput } from './bill-payments.schemas.js';
import { type BillPaymentStatus, type BillPaymentTrigger, billPaymentMachine } from './bill-payments.states.js';

type PaymentRow = typeof billPayments.$inferSelect;
type AllocationView = { billId: string; billNumber: string; amount: number };

function paymentView(p: PaymentRow, allocations: AllocationView[]) {
  return {
    id: p.id,
    vendorId: p.vendorId,
    method: p.method as BillPaymentMethod,
    paymentDate: p.paymentDate,
    reference: p.reference,
    status: p.status as BillPaymentStatus,
    amount: fromCents(p.amountCents),
    allocations,
    failureReason: p.failureReason,
    settledAt: p.settledAt,
    failedAt: p.failedAt,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
  };
}
type BillPaymentView = ReturnType<typeof paymentView>;

async function allocationsOf(ctx: Ctx, ids: string[]) {
  const byPayment = new Map<string, (AllocationView & { amountCents: number })[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return byPayment;
  const rows = await ctx.tx
    .select({
      billPaymentId: billPaymentAllocations.billPaymentId,
      billId: billPaymentAllocations.billId,
      amountCents: billPaymentAllocations.amountCents,
    })
    .from(billPaymentAllocations)
    .where(
      and(
        eq(billPaymentAllocations.organizationId, ctx.organizationId),
        inArray(billPaymentAllocations.billPaymentId, ids),
      ),
    )
    .orderBy(asc(billPaymentAllocations.billPaymentId), asc(billPaymentAllocations.position));
  // The bills' numbers from their owner, one query for the whole page (an allocation's
  // foreign key keeps its bill, so every number is there).
  const numbers = await billNumbers(
    ctx,
    rows.map((r) => r.billId),
  );
  for (const r of rows) {
    byPayment.get(r.billPaymentId)?.push({
      billId: r.billId,
      billNumber: numbers.get(r.billId) as string,
      amount: fromCents(r.amountCents),
      amountCents: r.amountCents,
    });
  }
  return byPayment;
}

async function viewOf(ctx: Ctx, row: PaymentRow): Promise<BillPaymentView> {
  const allocations = (await allocationsOf(ctx, [row.id])).get(row.id) ?? [];
  return paymentView(
    row,
    allocations.map(({ billId, billNumber, amount }) => ({ billId, billNumber, amount })),
  );
}

/** Event data (operations.md §3): id, vendor, amount, the bills it pays, the payment in its REST shape. */
async function emitPayment(
  ctx: Ctx,
  type: 'bill_payment.created' | 'bill_payment.settled' | 'bill_payment.failed',
  view: BillPaymentView,
) {
  await emit(ctx, type, {
    billPaymentId: view.id,
    vendorId: view.vendorId,
    amount: view.amount,
    billIds: view.allocations.map((a) => a.billId),
    billPayment: view,
  });
}

const { mine, find: findRow } = ownedRows(billPayments, 'Bill payment');

export async function getBillPayment(ctx: Ctx, id: string) {
  return viewOf(ctx, await findRow(ctx, id, false));
}

export async function listBillPayments(
  ctx: Ctx,
  f: { vendorId?: string | undefined; status?: BillPaymentStatus | undefined },
  page: Page,
) {
  const where: SQL[] = [eq(billPayments.organizationId, ctx.organizationId)];
  if (f.vendorId) where.push(eq(billPayments.vendorId, f.vendorId));
  if (f.status) where.push(eq(billPayments.status, f.status));
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, billPayments, and(...where), page);
  const allocations = await allocationsOf(
    ctx,
    rows.map((r) => r.id),
  );
  return {
    rows: rows.map((r) =>
      paymentView(
        r,
        (allocations.get(r.id) ?? []).map(({ billId, billNumber, amount }) => ({ billId, billNumber, amount })),
      ),
    ),
    ...more,
  };
}

/**
 * Pays bills of one vendor. Every allocation is checked against its bill, locked
 * FOR UPDATE, before anything is written, so a refused request writes nothing and
 * two payments racing for one balance cannot both take it. The payment is applied
 * and booked at once (Dr 2000, Cr 1000), scheduled or not.
 */
export async function createBillPayment(ctx: Ctx, input: CreateBillPaymentInput) {
  const amounts = input.allocations.map((a, i) => {
    const cents = toCents(a.amount, `allocations[${i}].amount`);
    if (cents <= 0) throw invalidField(`allocations[${i}].amount`, 'must be greater than 0');
    return cents;
  });
  const seen = new Set<string>();
  input.allocations.forEach((a, i) => {
    if (seen.has(a.billId)) throw invalidField(`allocations[${i}].billId`, 'each bill may appear once');
    seen.add(a.billId);
  });
  const vendor = await requireVendor(ctx, input.vendorId, { allowInactive: true });
  const locked = await lockBills(ctx, [...seen]);
  input.allocations.forEach((a, i) => {
    const field = `allocations[${i}].billId`;
    const bill = locked.get(a.billId);
    if (!bill) throw invalidField(field, 'no such bill in this organization');
    if (bill.vendorId !== vendor.id) throw invalidField(field, `bill ${bill.billNumber} belongs to another vendor`);
    const status = bill.status as BillStatus;
    if (!acceptsBillPayment(status)) {
      throw invalidField(
        field,
        `bill ${bill.billNumber} is ${status.replace('_', ' ')}; only open or partially paid bills take payments`,
      );
    }
    const balance = billBalanceCents(bill);
    if ((amounts[i] as number) > balance) {
      throw invalidField(
        `allocations[${i}].amount`,
        `must not exceed the balance of bill ${bill.billNumber} (${fromCents(balance)})`,
      );
    }
  });
  const { timezone } = await getOrgSettings(ctx);
  const todayDate = today(timezone);
  const paymentDate = input.paymentDate ?? todayDate;
  const totalCents = amounts.reduce((s, c) => s + c, 0);

  const id = newId('bpy');
  const [row] = await ctx.tx
    .insert(billPayments)
    .values({
      id,
      organizationId: ctx.organizationId,
      vendorId: vendor.id,
      method: input.method,
      paymentDate,
      reference: input.reference?.trim() || null,
      status: paymentDate > todayDate ? 'scheduled' : 'pending',
      amountCents: totalCents,
    })
    .returning();
  await ctx.tx.insert(billPaymentAllocations).values(
    input.allocations.map((a, i) => ({
      id: newId('bpa'),
      organizationId: ctx.organizationId,
      billPaymentId: id,
      billId: a.billId,
      position: i,
      amountCents: amounts[i] as number,
    })),
  );
  await postEntry(ctx, {
    sourceType: 'bill_payment',
    sourceId: id,
    memo: `Payment to ${vendor.name}`,
    documentDates: [{ field: 'paymentDate', date: paymentDate }],
    lines: [
      { accountCode: ACCOUNT.payable, debit: totalCents },
      { accountCode: ACCOUNT.cash, credit: totalCents },
    ],
  });
  const view = await viewOf(ctx, row as PaymentRow);
  await emitPayment(ctx, 'bill_payment.created', view);
  // The bills after the payment's own event, so a subscriber sees bill.paid follow the payment.
  for (const [i, a] of input.allocations.entries()) {
    await applyPaymentToBill(
      ctx,
      locked.get(a.billId) as NonNullable<ReturnType<typeof locked.get>>,
      amounts[i] as number,
    );
  }
  return view;
}

async function move(ctx: Ctx, row: PaymentRow, trigger: BillPaymentTrigger, extra: Partial<PaymentRow> = {}) {
  const status = take(billPaymentMachine, row.status as BillPaymentStatus, trigger);
  const [updated] = await ctx.tx
    .update(billPayments)
    .set({ ...extra, status, updatedAt: new Date() })
    .where(mine(ctx, row.id))
    .returning();
  return updated as PaymentRow;
}

export async function settleBillPayment(ctx: Ctx, id: string) {
  const row = await findRow(ctx, id, true);
  const view = await viewOf(ctx, await move(ctx, row, 'settle', { settledAt: new Date() }));
  await emitPayment(ctx, 'bill_payment.settled', view);
  return view;
}

/**
 * Failed or returned: every allocation is taken back from its bill (paid → open or
 * partially_paid) and the booking reversed (Dr 1000, Cr 2000).
 */
export async function failBillPayment(ctx: Ctx, id: string, reason: string) {
  const row = await findRow(ctx, id, true);
  const after = await move(ctx, row, 'fail', { failedAt: new Date(), failureReason: reason.trim() });
  const allocations = (await allocationsOf(ctx, [id])).get(id) ?? [];
  const locked = await lockBills(
    ctx,
    allocations.map((a) => a.billId),
  );
  for (const a of allocations) {
    const bill = locked.get(a.billId);
    if (bill) await reversePaymentOnBill(ctx, bill, a.amountCents);
  }
  await postEntry(ctx, {
    sourceType: 'bill_payment',
    sourceId: id,
    memo: `Bill payment ${row.status === 'settled' ? 'returned' : 'failed'}: ${reason.trim()}`,
    lines: [
      { accountCode: ACCOUNT.cash, debit: row.amountCents },
      { accountCode: ACCOUNT.payable, credit: row.amountCents },
    ],
  });
  const view = await viewOf(ctx, after);
  await emitPayment(ctx, 'bill_payment.failed', view);
  return view;
}

/**
 * The worker's move for one organization: scheduled payments dated today or
 * earlier become pending (no event: nothing changed for the books or the bills).
 * Claimed with SKIP LOCKED and re-checked by status, so concurrent workers never
 * move one twice.
 */
export async function markBillPaymentsDue(ctx: Ctx, todayDate: string, limit: number): Promise<number> {
  const due = await ctx.tx
    .select()
    .from(billPayments)
    .where(
      and(
        eq(billPayments.organizationId, ctx.organizationId),
        inArray(billPayments.status, statesAccepting(billPaymentMachine, 'due')),
        lte(billPayments.paymentDate, todayDate),
      ),
    )
    .orderBy(asc(billPayments.paymentDate))
    .limit(limit)
    .for('update', { skipLocked: true });
  for (const row of due) await move(ctx, row, 'due');
  return due.length;
}
