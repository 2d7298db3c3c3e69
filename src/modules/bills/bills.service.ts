import { and, asc, eq, inArray, type SQL } from 'drizzle-orm';
import { billLines, bills } from '../../db/schema/index.js';
import { addDays, today } from '../../platform/dates.js';
import { invalidField, invalidState } from '../../platform/errors.js';
import { emit } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import { fromCents, MAX_TOTAL_CENTS, toCents } from '../../platform/money.js';
import { documentLineRows, ownedRows } from '../../platform/owned-rows.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import { take, withArticle } from '../../platform/state-machine.js';
import type { Ctx } from '../../platform/tenancy.js';
import { nextDocumentNumber } from '../billing/numbering.js';
import { ACCOUNT } from '../ledger/ledger.accounts.js';
import { getOrgSettings } from '../settings/settings.service.js';
import { requireVendor, type VendorRow } from '../vendors/vendors.service.js';
import { postBillOpened, postBillVoided } from './bills.ledger.js';
import type { CreateBillInput, UpdateBillInput } from './bills.schemas.js';
import {
  type BillStatus,
  type BillTrigger,
  billMachine,
  EDITABLE_BILL_STATUSES,
  LIMITED_BILL_FIELDS,
} from './bills.states.js';

export type BillRow = typeof bills.$inferSelect;
type LineRow = typeof billLines.$inferSelect;

export const billBalanceCents = (r: BillRow) => (r.status === 'void' ? 0 : r.totalCents - r.amountPaidCents);

function billView(r: BillRow, lines: LineRow[]) {
  return {
    id: r.id,
    billNumber: r.billNumber,
    vendorId: r.vendorId,
    purchaseOrderId: r.purchaseOrderId,
    vendorReference: r.vendorReference,
    status: r.status as BillStatus,
    billDate: r.billDate,
    dueDate: r.dueDate,
    lineItems: lines.map((l) => ({
      id: l.id,
      description: l.description,
      amount: fromCents(l.amountCents),
      accountCode: l.accountCode,
    })),
    total: fromCents(r.totalCents),
    amountPaid: fromCents(r.amountPaidCents),
    balance: fromCents(billBalanceCents(r)),
    notes: r.notes,
    postedAt: r.postedAt,
    approvedAt: r.approvedAt,
    approvedBy: r.approvedBy,
    voidedAt: r.voidedAt,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}
export type BillView = ReturnType<typeof billView>;

const billLineRows = documentLineRows(billLines, 'billId');
const linesOf = billLineRows.of;
const linesOfOne = billLineRows.ofOne;

export async function billViewOf(ctx: Ctx, row: BillRow): Promise<BillView> {
  return billView(row, await linesOfOne(ctx, row.id));
}

const { mine, find: findRow } = ownedRows(bills, 'Bill');

/** Bill event data (operations.md §3): id, number, vendor, total, balance, the bill in its REST shape. */
export async function emitBill(
  ctx: Ctx,
  type: 'bill.created' | 'bill.approved' | 'bill.paid' | 'bill.voided',
  view: BillView,
) {
  await emit(ctx, type, {
    billId: view.id,
    billNumber: view.billNumber,
    vendorId: view.vendorId,
    total: view.total,
    balance: view.balance,
    bill: view,
  });
}

export async function getBill(ctx: Ctx, id: string) {
  return billViewOf(ctx, await findRow(ctx, id, false));
}

export interface BillListFilter {
  status?: BillStatus | undefined;
  vendorId?: string | undefined;
  purchaseOrderId?: string | undefined;
}

export async function listBills(ctx: Ctx, f: BillListFilter, page: Page) {
  const where: SQL[] = [eq(bills.organizationId, ctx.organizationId)];
  if (f.status) where.push(eq(bills.status, f.status));
  if (f.vendorId) where.push(eq(bills.vendorId, f.vendorId));
  if (f.purchaseOrderId) where.push(eq(bills.purchaseOrderId, f.purchaseOrderId));
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, bills, and(...where), page);
  const lines = await linesOf(
    ctx,
    rows.map((r) => r.id),
  );
  return { rows: rows.map((r) => billView(r, lines.get(r.id) ?? [])), ...more };
}

export interface BillLineInputT {
  description: string;
  amount: number;
  accountCode?: string | undefined;
}

interface CheckedLine {
  description: string;
  amountCents: number;
  accountCode: string;
}

/** Exact money checks, before anything is written: every line > 0, the total within bounds. */
export function checkBillLines(lines: BillLineInputT[]): { lines: CheckedLine[]; totalCents: number } {
  const out = lines.map((l, i) => {
    const amountCents = toCents(l.amount, `lineItems[${i}].amount`);
    if (amountCents <= 0) throw invalidField(`lineItems[${i}].amount`, 'must be greater than 0');
    return { description: l.description.trim(), amountCents, accountCode: l.accountCode ?? ACCOUNT.materials };
  });
  const totalCents = out.reduce((s, l) => s + l.amountCents, 0);
  if (totalCents > MAX_TOTAL_CENTS) throw invalidField('lineItems', 'the bill total must not exceed 1000000000.00');
  return { lines: out, totalCents };
}

async function insertLines(ctx: Ctx, billId: string, lines: CheckedLine[]) {
  await ctx.tx
    .insert(billLines)
    .values(
      lines.map((l, position) => ({ ...l, id: newId('bln'), organizationId: ctx.organizationId, billId, position })),
    );
}

const checkDueDate = (billDate: string, dueDate: string) => {
  if (dueDate < billDate) throw invalidField('dueDate', `must not be before billDate (${billDate})`);
};

const termsOf = async (ctx: Ctx, vendor: VendorRow) =>
  vendor.paymentTermsDays ?? (await getOrgSettings(ctx)).paymentTermsDays;

export interface NewBill {
  vendor: VendorRow;
  purchaseOrderId: string | null;
  vendorReference: string | null;
  billDate: string;
  dueDate: string;
  notes: string | null;
  lines: CheckedLine[];
  totalCents: number;
  draft: boolean;
}

/** Numbers and stores a checked bill, posts it unless a draft, and emits bill.created once. */
export async function insertBill(ctx: Ctx, doc: NewBill): Promise<BillView> {
  const billNumber = await nextDocumentNumber(ctx, 'bill');
  const id = newId('bil');
  const [inserted] = await ctx.tx
    .insert(bills)
    .values({
      id,
      organizationId: ctx.organizationId,
      billNumber,
      vendorId: doc.vendor.id,
      purchaseOrderId: doc.purchaseOrderId,
      vendorReference: doc.vendorReference,
      status: 'draft',
      billDate: doc.billDate,
      dueDate: doc.dueDate,
      notes: doc.notes,
      totalCents: doc.totalCents,
    })
    .returning();
  await insertLines(ctx, id, doc.lines);
  const row = doc.draft ? (inserted as BillRow) : await postRow(ctx, inserted as BillRow);
  const view = await billViewOf(ctx, row);
  await emitBill(ctx, 'bill.created', view);
  return view;
}

/**
 * A bill as POST /api/bills records it. A bill naming a purchase order is started by
 * src/flows/create-bill.ts, which asks the purchase-orders module for that order's vendor
 * (`orderVendorId`, undefined when the organization has no such order): bills do not read
 * orders, but they refuse one of another vendor. Without `orderVendorId` a named order → 400.
 */
export async function createBill(ctx: Ctx, input: CreateBillInput, orderVendorId?: string): Promise<BillView> {
  const { lines, totalCents } = checkBillLines(input.lineItems);
  const vendor = await requireVendor(ctx, input.vendorId);
  if (input.purchaseOrderId) {
    if (!orderVendorId) throw invalidField('purchaseOrderId', 'no such purchase order in this organization');
    if (orderVendorId !== vendor.id) throw invalidField('purchaseOrderId', 'the order belongs to another vendor');
  }
  const { timezone } = await getOrgSettings(ctx);
  const billDate = input.billDate ?? today(timezone);
  const dueDate = input.dueDate ?? addDays(billDate, await termsOf(ctx, vendor));
  checkDueDate(billDate, dueDate);
  return insertBill(ctx, {
    vendor,
    purchaseOrderId: input.purchaseOrderId ?? null,
    vendorReference: input.vendorReference?.trim() || null,
    billDate,
    dueDate,
    notes: input.notes ?? null,
    lines,
    totalCents,
    draft: input.draft === true,
  });
}

/**
 * Moves a bill by `trigger` (409 if the table refuses) and books it when it
 * becomes open: the ledger sees a bill from open onwards.
 */
async function moveRow(ctx: Ctx, row: BillRow, trigger: BillTrigger, extra: Partial<BillRow> = {}): Promise<BillRow> {
  const status = take(billMachine, row.status as BillStatus, trigger);
  const [updated] = await ctx.tx
    .update(bills)
    .set({
      ...extra,
      status,
      ...(status === 'open' && row.postedAt === null ? { postedAt: new Date() } : {}),
      updatedAt: new Date(),
    })
    .where(mine(ctx, row.id))
    .returning();
  const after = updated as BillRow;
  if (row.postedAt === null && after.postedAt !== null) await postBillOpened(ctx, after, await linesOfOne(ctx, row.id));
  return after;
}

/** Posting: above settings billApprovalThreshold it waits for approval, otherwise it is open. */
async function postRow(ctx: Ctx, row: BillRow): Promise<BillRow> {
  const threshold = (await getOrgSettings(ctx)).billApprovalThresholdCents;
  const needsApproval = threshold !== null && row.totalCents > threshold;
  return moveRow(ctx, row, needsApproval ? 'post_for_approval' : 'post');
}

export async function postBill(ctx: Ctx, id: string) {
  return billViewOf(ctx, await postRow(ctx, await findRow(ctx, id, true)));
}

export async function approveBill(ctx: Ctx, id: string) {
  const row = await findRow(ctx, id, true);
  const after = await moveRow(ctx, row, 'approve', { approvedAt: new Date(), approvedBy: ctx.actor.id });
  const view = await billViewOf(ctx, after);
  await emitBill(ctx, 'bill.approved', view);
  return view;
}

export async function voidBill(ctx: Ctx, id: string) {
  const row = await findRow(ctx, id, true);
  if (row.amountPaidCents > 0) {
    throw invalidState(`Bill ${row.billNumber} has payments (${fromCents(row.amountPaidCents)}); it cannot be voided`);
  }
  const after = await moveRow(ctx, row, 'void', { voidedAt: new Date() });
  const lines = await linesOfOne(ctx, id);
  await postBillVoided(ctx, row, lines);
  const view = billView(after, lines);
  await emitBill(ctx, 'bill.voided', view);
  return view;
}

export async function updateBill(ctx: Ctx, id: string, patch: UpdateBillInput) {
  const row = await findRow(ctx, id, true);
  const given = Object.keys(patch).filter((k) => patch[k as keyof UpdateBillInput] !== undefined);
  if (!EDITABLE_BILL_STATUSES.includes(row.status as BillStatus)) {
    const refused = given.filter((k) => !(LIMITED_BILL_FIELDS as readonly string[]).includes(k));
    if (refused.length > 0) {
      throw invalidState(
        `${withArticle(`${row.status} bill`, true)} accepts changes to ${LIMITED_BILL_FIELDS.join(' and ')} only (not ${refused.join(', ')})`,
      );
    }
  }
  const checked = patch.lineItems ? checkBillLines(patch.lineItems) : undefined;
  if (patch.vendorId !== undefined && patch.vendorId !== row.vendorId) {
    await requireVendor(ctx, patch.vendorId);
    if (row.purchaseOrderId) throw invalidField('vendorId', 'the bill comes from a purchase order of another vendor');
  }
  const billDate = patch.billDate ?? row.billDate;
  const dueDate = patch.dueDate ?? row.dueDate;
  checkDueDate(billDate, dueDate);
  const [updated] = await ctx.tx
    .update(bills)
    .set({
      vendorId: patch.vendorId ?? row.vendorId,
      vendorReference:
        patch.vendorReference === undefined ? row.vendorReference : patch.vendorReference?.trim() || null,
      billDate,
      dueDate,
      notes: patch.notes === undefined ? row.notes : patch.notes,
      ...(checked ? { totalCents: checked.totalCents } : {}),
      updatedAt: new Date(),
    })
    .where(mine(ctx, id))
    .returning();
  if (checked) {
    await billLineRows.clear(ctx, id);
    await insertLines(ctx, id, checked.lines);
  }
  return billViewOf(ctx, updated as BillRow);
}

/**
 * Step 1 of deleting a bill (src/flows/delete-bill.ts): the bill, locked, refused unless a
 * draft (a posted bill is in the books; it can be voided instead).
 */
export async function deletableBill(ctx: Ctx, id: string): Promise<BillRow> {
  const row = await findRow(ctx, id, true);
  if (row.status !== 'draft')
    throw invalidState(`Only a draft bill can be deleted; this one is ${row.status.replace('_', ' ')}`);
  return row;
}

/** The last step of deleting a bill: the draft from `deletableBill` goes, its lines with it (cascade). */
export async function removeBill(ctx: Ctx, draft: BillRow): Promise<void> {
  await ctx.tx.delete(bills).where(mine(ctx, draft.id));
}

/**
 * The bills a payment allocates to, locked FOR UPDATE in id order (so two payments
 * over the same bills queue instead of deadlocking); each then sees the balance
 * the previous one left.
 */
export async function lockBills(ctx: Ctx, ids: string[]): Promise<Map<string, BillRow>> {
  if (ids.length === 0) return new Map();
  const rows = await ctx.tx
    .select()
    .from(bills)
    .where(and(eq(bills.organizationId, ctx.organizationId), inArray(bills.id, ids)))
    .orderBy(asc(bills.id))
    .for('update');
  return new Map(rows.map((r) => [r.id, r]));
}

/** An allocation applied to a locked bill: amountPaid up, status by the table, bill.paid at zero. */
export async function applyPaymentToBill(ctx: Ctx, row: BillRow, amountCents: number): Promise<BillRow> {
  const balance = billBalanceCents(row);
  const trigger: BillTrigger = amountCents === balance ? 'full_payment' : 'partial_payment';
  const after = await moveRow(ctx, row, trigger, { amountPaidCents: row.amountPaidCents + amountCents });
  if (trigger === 'full_payment') await emitBill(ctx, 'bill.paid', await billViewOf(ctx, after));
  return after;
}

/** An allocation of a failed payment taken back: the bill reopens (open, or partially_paid if others still pay it). */
export async function reversePaymentOnBill(ctx: Ctx, row: BillRow, amountCents: number): Promise<BillRow> {
  const paid = row.amountPaidCents - amountCents;
  const trigger: BillTrigger = paid === 0 ? 'payment_reversed_to_unpaid' : 'payment_reversed_to_partial';
  return moveRow(ctx, row, trigger, { amountPaidCents: paid });
}
