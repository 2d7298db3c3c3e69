import { and, eq, type SQL } from 'drizzle-orm';
import { purchaseOrderLines, purchaseOrders } from '../../db/schema/index.js';
import { today } from '../../platform/dates.js';
import { invalidField, invalidState } from '../../platform/errors.js';
import { emit } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import { checkQuantity, fromCents, lineAmountCents, MAX_TOTAL_CENTS, toCents } from '../../platform/money.js';
import { documentLineRows, ownedRows } from '../../platform/owned-rows.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import { take } from '../../platform/state-machine.js';
import type { Ctx } from '../../platform/tenancy.js';
import { nextDocumentNumber } from '../billing/numbering.js';
import { forgetPurchaseOrder } from '../bills/bills.refs.js';
import { jobExists } from '../jobs/jobs.refs.js';
import { queueMail } from '../mail/mail.service.js';
import { getOrgSettings } from '../settings/settings.service.js';
import { requireVendor } from '../vendors/vendors.service.js';
import type { CreatePoInput, UpdatePoInput } from './purchase-orders.schemas.js';
import { PO_TRIGGER_EVENT, type PoStatus, type PoTrigger, poMachine } from './purchase-orders.states.js';

type PoRow = typeof purchaseOrders.$inferSelect;
type LineRow = typeof purchaseOrderLines.$inferSelect;

function poView(r: PoRow, lines: LineRow[]) {
  return {
    id: r.id,
    poNumber: r.poNumber,
    vendorId: r.vendorId,
    jobId: r.jobId,
    status: r.status as PoStatus,
    orderDate: r.orderDate,
    expectedDate: r.expectedDate,
    lineItems: lines.map((l) => ({
      id: l.id,
      description: l.description,
      quantity: Number(l.quantity),
      unitCost: fromCents(l.unitCostCents),
      amount: fromCents(l.amountCents),
      equipmentId: l.equipmentId,
    })),
    total: fromCents(r.totalCents),
    notes: r.notes,
    billId: r.billId,
    sentAt: r.sentAt,
    receivedAt: r.receivedAt,
    cancelledAt: r.cancelledAt,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}
type PoView = ReturnType<typeof poView>;

const poLineRows = documentLineRows(purchaseOrderLines, 'purchaseOrderId');
const linesOf = poLineRows.of;
const linesOfOne = poLineRows.ofOne;
const viewOf = async (ctx: Ctx, row: PoRow) => poView(row, await linesOfOne(ctx, row.id));

const { mine, find: findRow } = ownedRows(purchaseOrders, 'Purchase order');

/** Event data (operations.md §3): id, number, vendor, total, the order in its REST shape. */
async function emitPo(ctx: Ctx, type: Parameters<typeof emit>[1], view: PoView) {
  await emit(ctx, type, {
    purchaseOrderId: view.id,
    poNumber: view.poNumber,
    vendorId: view.vendorId,
    total: view.total,
    purchaseOrder: view,
  });
}

export async function getPurchaseOrder(ctx: Ctx, id: string) {
  return viewOf(ctx, await findRow(ctx, id, false));
}

export async function listPurchaseOrders(
  ctx: Ctx,
  f: { status?: PoStatus | undefined; vendorId?: string | undefined; jobId?: string | undefined },
  page: Page,
) {
  const where: SQL[] = [eq(purchaseOrders.organizationId, ctx.organizationId)];
  if (f.status) where.push(eq(purchaseOrders.status, f.status));
  if (f.vendorId) where.push(eq(purchaseOrders.vendorId, f.vendorId));
  if (f.jobId) where.push(eq(purchaseOrders.jobId, f.jobId));
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, purchaseOrders, and(...where), page);
  const lines = await linesOf(
    ctx,
    rows.map((r) => r.id),
  );
  return { rows: rows.map((r) => poView(r, lines.get(r.id) ?? [])), ...more };
}

interface CheckedLine {
  description: string;
  quantity: string;
  unitCostCents: number;
  amountCents: number;
  equipmentId: string | null;
}

function checkLines(lines: CreatePoInput['lineItems']): { lines: CheckedLine[]; totalCents: number } {
  const out = lines.map((l, i) => {
    checkQuantity(l.quantity, `lineItems[${i}].quantity`);
    const unitCostCents = toCents(l.unitCost, `lineItems[${i}].unitCost`);
    return {
      description: l.description.trim(),
      quantity: String(l.quantity),
      unitCostCents,
      amountCents: lineAmountCents(l.quantity, unitCostCents),
      equipmentId: l.equipmentId ?? null,
    };
  });
  const totalCents = out.reduce((s, l) => s + l.amountCents, 0);
  if (totalCents > MAX_TOTAL_CENTS) throw invalidField('lineItems', 'the order total must not exceed 1000000000.00');
  return { lines: out, totalCents };
}

async function requireJob(ctx: Ctx, id: string) {
  if (!(await jobExists(ctx, id))) throw invalidField('jobId', 'no such job in this organization');
}

const checkExpected = (orderDate: string, expectedDate: string | null) => {
  if (expectedDate && expectedDate < orderDate) {
    throw invalidField('expectedDate', `must not be before orderDate (${orderDate})`);
  }
};

async function insertLines(ctx: Ctx, purchaseOrderId: string, lines: CheckedLine[]) {
  await ctx.tx.insert(purchaseOrderLines).values(
    lines.map((l, position) => ({
      ...l,
      id: newId('pol'),
      organizationId: ctx.organizationId,
      purchaseOrderId,
      position,
    })),
  );
}

export async function createPurchaseOrder(ctx: Ctx, input: CreatePoInput) {
  const { lines, totalCents } = checkLines(input.lineItems);
  const vendor = await requireVendor(ctx, input.vendorId);
  if (input.jobId) await requireJob(ctx, input.jobId);
  const orderDate = input.orderDate ?? today((await getOrgSettings(ctx)).timezone);
  checkExpected(orderDate, input.expectedDate ?? null);
  const poNumber = await nextDocumentNumber(ctx, 'purchase_order');
  const id = newId('po');
  const [row] = await ctx.tx
    .insert(purchaseOrders)
    .values({
      id,
      organizationId: ctx.organizationId,
      poNumber,
      vendorId: vendor.id,
      jobId: input.jobId ?? null,
      status: 'draft',
      orderDate,
      expectedDate: input.expectedDate ?? null,
      notes: input.notes ?? null,
      totalCents,
    })
    .returning();
  await insertLines(ctx, id, lines);
  const view = await viewOf(ctx, row as PoRow);
  await emitPo(ctx, 'purchase-order.created', view);
  return view;
}

const requireDraft = (row: PoRow, what: string) => {
  if (row.status !== 'draft')
    throw invalidState(`Only a draft purchase order can be ${what}; this one is ${row.status}`);
};

export async function updatePurchaseOrder(ctx: Ctx, id: string, patch: UpdatePoInput) {
  const row = await findRow(ctx, id, true);
  requireDraft(row, 'changed');
  const checked = patch.lineItems ? checkLines(patch.lineItems) : undefined;
  if (patch.vendorId !== undefined && patch.vendorId !== row.vendorId) await requireVendor(ctx, patch.vendorId);
  if (patch.jobId) await requireJob(ctx, patch.jobId);
  const orderDate = patch.orderDate ?? row.orderDate;
  const expectedDate = patch.expectedDate === undefined ? row.expectedDate : patch.expectedDate;
  checkExpected(orderDate, expectedDate);
  const [updated] = await ctx.tx
    .update(purchaseOrders)
    .set({
      vendorId: patch.vendorId ?? row.vendorId,
      jobId: patch.jobId === undefined ? row.jobId : patch.jobId,
      orderDate,
      expectedDate,
      notes: patch.notes === undefined ? row.notes : patch.notes,
      ...(checked ? { totalCents: checked.totalCents } : {}),
      updatedAt: new Date(),
    })
    .where(mine(ctx, id))
    .returning();
  if (checked) {
    await poLineRows.clear(ctx, id);
    await insertLines(ctx, id, checked.lines);
  }
  return viewOf(ctx, updated as PoRow);
}

export async function deletePurchaseOrder(ctx: Ctx, id: string) {
  const row = await findRow(ctx, id, true);
  requireDraft(row, 'deleted');
  // A bill made from it keeps living without it (ON DELETE SET NULL until drizzle/0038).
  await forgetPurchaseOrder(ctx, id);
  await ctx.tx.delete(purchaseOrders).where(mine(ctx, id));
}

const STAMP: Record<PoTrigger, keyof PoRow> = { send: 'sentAt', receive: 'receivedAt', cancel: 'cancelledAt' };

async function transition(ctx: Ctx, id: string, trigger: PoTrigger) {
  const row = await findRow(ctx, id, true);
  const status = take(poMachine, row.status as PoStatus, trigger);
  const [updated] = await ctx.tx
    .update(purchaseOrders)
    .set({ status, [STAMP[trigger]]: new Date(), updatedAt: new Date() })
    .where(mine(ctx, id))
    .returning();
  const view = await viewOf(ctx, updated as PoRow);
  await emitPo(ctx, PO_TRIGGER_EVENT[trigger], view);
  return view;
}

export const receivePurchaseOrder = (ctx: Ctx, id: string) => transition(ctx, id, 'receive');
export const cancelPurchaseOrder = (ctx: Ctx, id: string) => transition(ctx, id, 'cancel');

/**
 * draft → sent, with the mail to the vendor queued in the same transaction (the
 * worker sends it, retrying while the mail server refuses). A vendor without an
 * email gets no mail; the order is still sent (emailedTo empty).
 */
export async function sendPurchaseOrder(ctx: Ctx, id: string) {
  const view = await transition(ctx, id, 'send');
  const vendor = await requireVendor(ctx, view.vendorId, { allowInactive: true });
  const emailedTo = vendor.email ? [vendor.email] : [];
  if (emailedTo.length > 0) {
    const settings = await getOrgSettings(ctx);
    const from = settings.companyName ?? settings.name;
    const lines = view.lineItems.map(
      (l) =>
        `- ${l.description}: ${l.quantity} × ${l.unitCost.toFixed(2)} = ${l.amount.toFixed(2)} ${settings.currency}`,
    );
    await queueMail(ctx, {
      documentType: 'purchase_order',
      documentId: id,
      to: emailedTo,
      subject: `Purchase order ${view.poNumber} from ${from}`,
      text: [
        `Hello ${vendor.name},`,
        '',
        `Please supply the following (purchase order ${view.poNumber}, dated ${view.orderDate}):`,
        '',
        ...lines,
        '',
        `Total: ${view.total.toFixed(2)} ${settings.currency}`,
        ...(view.expectedDate ? [`Expected by: ${view.expectedDate}`] : []),
        ...(view.notes ? ['', view.notes] : []),
        '',
        `— ${from}`,
        '',
      ].join('\n'),
    });
  }
  return { ...view, emailedTo };
}

/**
 * Step 1 of billing a purchase order (src/flows/bill-purchase-order.ts): the order, locked,
 * checked to be received and not billed yet, with the lines that have an amount.
 */
export async function billableOrder(ctx: Ctx, id: string) {
  const row = await findRow(ctx, id, true);
  if (row.status !== 'received') {
    throw invalidState(`Only a received purchase order can be billed; this one is ${row.status}`);
  }
  if (row.billId) throw invalidState(`Purchase order ${row.poNumber} already has bill ${row.billId}`);
  const lines = (await linesOfOne(ctx, id)).filter((l) => l.amountCents > 0);
  if (lines.length === 0) throw invalidState(`Purchase order ${row.poNumber} has nothing to bill (total 0)`);
  return { order: row, lines };
}

/** The last step of billing a purchase order: it points at its bill (one bill per order). */
export async function markBilled(ctx: Ctx, id: string, billId: string) {
  await ctx.tx.update(purchaseOrders).set({ billId, updatedAt: new Date() }).where(mine(ctx, id));
}
