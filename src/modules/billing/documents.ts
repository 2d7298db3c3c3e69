import { type AnyColumn, and, asc, eq, getTableColumns, inArray, lt, type SQL, sql, type Table } from 'drizzle-orm';
import type { estimateLineItems, estimates, invoiceLineItems, invoices } from '../../db/schema/index.js';
import { chunked, valuesList } from '../../db/values.js';
import { listValues } from '../../platform/enum.js';
import { invalidState } from '../../platform/errors.js';
import type { CatalogEvent } from '../../platform/events/catalog.js';
import { emit } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import { fromCents } from '../../platform/money.js';
import { ownedRows } from '../../platform/owned-rows.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import { type StateMachine, statesAccepting, take, withArticle } from '../../platform/state-machine.js';
import type { Ctx } from '../../platform/tenancy.js';
import { type CustomerRow, customerById, requireCustomer, requireProperty } from '../customers/customers.refs.js';
import { type LastEmail, lastEmailsOf, type MailDocumentType } from '../mail/mail.service.js';
import { createPortalLink, type PortalDocumentType } from '../portal-links/portal-links.service.js';
import { getOrgSettings, type OrgSettings } from '../settings/settings.service.js';
import { queueDocumentMail } from './document-mail.js';
import {
  finish,
  type LineItemInputT,
  lineRows,
  lineView,
  type PricedDocument,
  priceLines,
  storedToPriced,
  taxRateFor,
  totalsColumns,
} from './line-items.js';

/*
 * What every billing document with lines, a customer and a send action does the
 * same way (invoices and estimates today; purchase orders and bills may follow):
 * the customer/property checks, pricing and re-pricing, line storage, creating a
 * draft, writing an edit, moving a status through the resource's state machine
 * (by request or by a time-driven sweep), listing a page, the send (portal link +
 * queued mail) and the events of a move. Each resource keeps its own service and
 * routes, its machine, its events and its rules; only this plumbing is shared.
 */

/**
 * What sending a document needs beyond the transaction: the public origin for its portal link
 * (mail goes through the queue). A caller sending many documents at once (billing the work)
 * hands in the settings and customers it has already read, so each send reads neither again.
 */
export interface SendDeps {
  baseUrl: string;
  settings?: OrgSettings | undefined;
  customers?: ReadonlyMap<string, CustomerRow> | undefined;
}

type DocumentTable = typeof invoices | typeof estimates;
type LineTable = typeof invoiceLineItems | typeof estimateLineItems;
type LineRow = typeof invoiceLineItems.$inferSelect | typeof estimateLineItems.$inferSelect;

/**
 * Finding, locking, moving and deleting one document type's rows; its state machine
 * names it in messages (`invoice`, `estimate`). Every status move goes through
 * `move` or `sweep`, and so through the machine.
 */
export function documentRows<T extends DocumentTable, S extends string, Tr extends string>(
  table: T,
  machine: StateMachine<S, Tr>,
) {
  type Row = T['$inferSelect'];
  const t = table as typeof invoices;
  const resource = machine.resource;
  const label = `${resource.charAt(0).toUpperCase()}${resource.slice(1)}`;
  /** `find`: the row, locked FOR UPDATE when it is about to change; 404 when missing or another organization's. */
  const { mine: byId, find: findAny } = ownedRows(t, label);
  const find = (ctx: Ctx, id: string, lock: boolean): Promise<Row> => findAny(ctx, id, lock) as Promise<Row>;
  return {
    byId,
    find,
    /** Only a draft may be deleted (409 otherwise); its lines go with it. */
    async deleteDraft(ctx: Ctx, id: string): Promise<void> {
      const row = (await find(ctx, id, true)) as { status: string };
      if (row.status !== 'draft') {
        throw invalidState(`Only a draft ${resource} can be deleted; this one is ${row.status}`);
      }
      await ctx.tx.delete(t).where(byId(ctx, id));
    },
    /** Locks the document and moves it by `trigger` (409 if the machine refuses), writing `extra` too. */
    async move(
      ctx: Ctx,
      id: string,
      trigger: Tr,
      extraOf: Partial<Row> | ((before: Row) => Partial<Row>) = {},
    ): Promise<{ before: Row; row: Row }> {
      const before = await find(ctx, id, true);
      const extra = typeof extraOf === 'function' ? extraOf(before) : extraOf;
      const status = take(machine, before.status as S, trigger);
      const [row] = await ctx.tx
        .update(t)
        .set({ ...(extra as object), status, updatedAt: new Date() })
        .where(byId(ctx, id))
        .returning();
      return { before, row: row as Row };
    },
    /**
     * A time-driven move for one organization: the documents in a state that accepts
     * `trigger` whose `date` is before `todayDate`, oldest first. Claimed with SKIP LOCKED
     * so a concurrent worker (or a payment holding the row) is never waited on; the status
     * re-check in the UPDATE makes a second run a no-op. `moved` runs per moved row.
     */
    async sweep(
      ctx: Ctx,
      trigger: Tr,
      date: Extract<keyof Row, 'dueDate' | 'expirationDate'>,
      todayDate: string,
      limit: number,
      moved: (before: Row, row: Row) => Promise<void> = async () => {},
    ): Promise<number> {
      const open = statesAccepting(machine, trigger);
      const dateColumn = columnOf<typeof invoices.dueDate>(table, date);
      const due = await ctx.tx
        .select()
        .from(t)
        .where(and(eq(t.organizationId, ctx.organizationId), inArray(t.status, open), lt(dateColumn, todayDate)))
        .orderBy(asc(dateColumn))
        .limit(limit)
        .for('update', { skipLocked: true });
      let count = 0;
      for (const before of due as Row[]) {
        const status = take(machine, before.status as S, trigger);
        const [row] = await ctx.tx
          .update(t)
          .set({ status, updatedAt: new Date() })
          .where(and(byId(ctx, (before as { id: string }).id), inArray(t.status, open)))
          .returning();
        if (!row) continue;
        await moved(before, row as Row);
        count++;
      }
      return count;
    },
  };
}

/** The columns every edit writes: parties, notes, totals when re-priced, and the time. */
function editedColumns(
  row: { notes: string | null },
  patch: { notes?: string | null | undefined },
  parties: { customerId: string; propertyId: string | null; priced: PricedDocument | undefined },
) {
  return {
    customerId: parties.customerId,
    propertyId: parties.propertyId,
    notes: patch.notes === undefined ? row.notes : patch.notes,
    ...(parties.priced ? totalsColumns(parties.priced) : {}),
    updatedAt: new Date(),
  };
}

/**
 * The column `name` of a document table: the due/expiry date and the line's parent differ by
 * document type, so the shared code reaches them by name. `C` is the invoice column of that
 * role (estimates' columns have the same SQL type).
 */
function columnOf<C extends AnyColumn>(table: Table, name: string): C {
  const column = getTableColumns(table)[name];
  if (!column) throw new Error(`${name} is no column of this table`);
  return column as C;
}

/** Reads and writes one document type's lines (`parent`: the column naming the document). */
export function documentLines<T extends LineTable, K extends 'invoiceId' | 'estimateId'>(table: T, parent: K) {
  type Row = T['$inferSelect'];
  const t = table as typeof invoiceLineItems;
  const parentColumn = columnOf<typeof invoiceLineItems.invoiceId>(table, parent);
  /** Lines of each document, in position order; every id gets an entry. */
  const of = async (ctx: Ctx, ids: string[]): Promise<Map<string, Row[]>> => {
    const byDocument = new Map<string, Row[]>(ids.map((id) => [id, []]));
    if (ids.length === 0) return byDocument;
    const rows = (await ctx.tx
      .select()
      .from(t)
      .where(and(eq(t.organizationId, ctx.organizationId), inArray(parentColumn, ids)))
      .orderBy(asc(parentColumn), asc(t.position))) as Row[];
    for (const row of rows) byDocument.get((row as Record<K, string>)[parent])?.push(row);
    return byDocument;
  };
  /**
   * The lines of several new documents, as multi-row VALUES of literals in chunks of at most
   * 65,535 values (a batch of 500 invoices of 10 lines is one statement). Not one JSON
   * parameter read by jsonb_to_recordset: Citus refuses that INSERT … SELECT under row-level
   * security, and routes these to the organization's shard (src/db/values.ts).
   */
  const insertMany = async (ctx: Ctx, documents: Array<{ documentId: string; priced: PricedDocument }>) => {
    const rows = documents.flatMap(({ documentId, priced }) =>
      lineRows(priced.lines).map((l) => [
        newId('lin'),
        ctx.organizationId,
        documentId,
        l.position,
        l.serviceId,
        l.description,
        l.quantity,
        l.unitPriceCents,
        l.taxable,
        l.amountCents,
      ]),
    );
    for (const chunk of chunked(rows, 10)) {
      await ctx.tx.execute(sql`INSERT INTO ${t}
          (id, organization_id, ${sql.identifier(parentColumn.name)}, position, service_id, description, quantity,
           unit_price_cents, taxable, amount_cents)
        ${valuesList(chunk)}`);
    }
  };
  const insert = (ctx: Ctx, documentId: string, priced: PricedDocument) => insertMany(ctx, [{ documentId, priced }]);
  return {
    of,
    insert,
    insertMany,
    /** One document's lines, in position order. */
    async stored(ctx: Ctx, id: string): Promise<Row[]> {
      return (await of(ctx, [id])).get(id) ?? [];
    },
    /** Every line replaced by the priced ones. */
    async replace(ctx: Ctx, documentId: string, priced: PricedDocument) {
      await ctx.tx.delete(t).where(and(eq(t.organizationId, ctx.organizationId), eq(parentColumn, documentId)));
      await insert(ctx, documentId, priced);
    },
  };
}

/** A new document's customer (400 if unknown), property (400 unless the customer's) and priced lines. */
export async function startDocument(
  ctx: Ctx,
  input: { customerId: string; propertyId?: string | undefined; lineItems: LineItemInputT[] },
): Promise<{ settings: OrgSettings; customer: CustomerRow; priced: PricedDocument }> {
  const settings = await getOrgSettings(ctx);
  const customer = await requireCustomer(ctx, input.customerId);
  if (input.propertyId) await requireProperty(ctx, customer.id, input.propertyId);
  const priced = await priceLines(ctx, input.lineItems, taxRateFor(customer, settings.taxRate));
  return { settings, customer, priced };
}

/** What every new document is given besides its own dates. */
export interface DocumentInput {
  customerId: string;
  propertyId?: string | undefined;
  lineItems: LineItemInputT[];
  notes?: string | undefined;
}

/** What every document edit may change besides its own dates (all optional: PUT is partial). */
export interface DocumentPatch {
  customerId?: string | undefined;
  propertyId?: string | null | undefined;
  lineItems?: LineItemInputT[] | undefined;
  notes?: string | null | undefined;
}

interface LineStore {
  insert(ctx: Ctx, documentId: string, priced: PricedDocument): Promise<void>;
  replace(ctx: Ctx, documentId: string, priced: PricedDocument): Promise<void>;
}

/**
 * Stores a new draft (`values`: its id, number, parties, dates and own columns) with
 * its priced lines and totals.
 */
export async function insertDraft<Row>(
  ctx: Ctx,
  table: DocumentTable,
  lines: LineStore,
  values: { id: string; customerId: string; propertyId: string | null; notes: string | null } & Record<string, unknown>,
  priced: PricedDocument,
): Promise<Row> {
  const [row] = await ctx.tx
    .insert(table as typeof invoices)
    .values({
      ...(values as typeof invoices.$inferInsert),
      organizationId: ctx.organizationId,
      status: 'draft',
      ...totalsColumns(priced),
    })
    .returning();
  await lines.insert(ctx, values.id, priced);
  return row as Row;
}

/**
 * Writes an edit: the parties, notes and totals `editParties` settled, the resource's
 * own `columns` (dates, a status the machine allowed), and the lines when given.
 */
export async function writeEdit<Row>(
  ctx: Ctx,
  table: DocumentTable,
  lines: LineStore,
  row: { id: string; notes: string | null },
  patch: DocumentPatch,
  parties: { customerId: string; propertyId: string | null; priced: PricedDocument | undefined },
  columns: Record<string, unknown>,
): Promise<Row> {
  const t = table as typeof invoices;
  const [updated] = await ctx.tx
    .update(t)
    .set({ ...columns, ...editedColumns(row, patch, parties) })
    .where(and(eq(t.organizationId, ctx.organizationId), eq(t.id, row.id)))
    .returning();
  if (parties.priced && patch.lineItems) await lines.replace(ctx, row.id, parties.priced);
  return updated as Row;
}

/**
 * A document that is no longer a draft accepts only `allowed` fields: 409 naming
 * the others. (Which states allow even those is the resource's rule.)
 */
export function refuseLockedFields(resource: string, status: string, patch: object, allowed: readonly string[]): void {
  const given = Object.entries(patch)
    .filter(([, v]) => v !== undefined)
    .map(([k]) => k);
  const refused = given.filter((k) => !allowed.includes(k));
  if (refused.length > 0) {
    throw invalidState(
      `${withArticle(`${status} ${resource}`, true)} accepts changes to ${allowed.join(' and ')} only (not ${refused.join(', ')})`,
    );
  }
}

/**
 * The customer, property and pricing an edit leads to: a changed customer or
 * property is checked (400 naming the field); given lines are priced, and a new
 * customer (whose tax exemption may differ) re-totals the stored lines at its rate.
 * `priced` is undefined when neither lines nor customer changed.
 */
export async function editParties(
  ctx: Ctx,
  row: { id: string; customerId: string; propertyId: string | null },
  patch: DocumentPatch,
  lines: { stored(ctx: Ctx, id: string): Promise<LineRow[]> },
): Promise<{ customerId: string; propertyId: string | null; priced: PricedDocument | undefined }> {
  const customerId = patch.customerId ?? row.customerId;
  const customerChanged = customerId !== row.customerId;
  const customer = customerChanged || patch.lineItems ? await requireCustomer(ctx, customerId) : undefined;
  const propertyId = patch.propertyId !== undefined ? patch.propertyId : row.propertyId;
  if (propertyId && (patch.propertyId !== undefined || customerChanged)) {
    await requireProperty(ctx, customerId, propertyId);
  }
  let priced: PricedDocument | undefined;
  if (customer) {
    const { taxRate } = await getOrgSettings(ctx);
    const rate = taxRateFor(customer, taxRate);
    if (patch.lineItems) priced = await priceLines(ctx, patch.lineItems, rate);
    else priced = finish((await lines.stored(ctx, row.id)).map(storedToPriced), rate);
  }
  return { customerId, propertyId, priced };
}

/**
 * The send of a document after its transition: a fresh portal link and the mail to
 * the customer queued in the same transaction, with the document's PDF attached by
 * the worker (`email: false`, a send texted only: no mail). `compose` writes the message from the org settings, the sender's name
 * and the link. Answers the document's view with the link, the addresses mailed and
 * the queued mail (`lastEmail` unchanged when the customer has no address).
 */
export async function sendDocumentLink<V extends { id: string; customerId: string; lastEmail: LastEmail | null }>(
  ctx: Ctx,
  type: PortalDocumentType & MailDocumentType,
  view: V,
  deps: SendDeps,
  compose: (m: { settings: OrgSettings; from: string; url: string }) => { subject: string; lines: string[] },
  { email = true }: { email?: boolean } = {},
): Promise<V & { portalUrl: string; emailedTo: string[] }> {
  const settings = deps.settings ?? (await getOrgSettings(ctx));
  const link = await createPortalLink(ctx, deps.baseUrl, type, view.id);
  // Texted only (channels ["sms"]): the link is made, no mail is queued.
  if (!email) return { ...view, portalUrl: link.url, emailedTo: [] };
  const customer = deps.customers?.get(view.customerId) ?? (await customerById(ctx, view.customerId));
  const message = compose({ settings, from: settings.companyName ?? settings.name, url: link.url });
  const { emailedTo, lastEmail } = await queueDocumentMail(ctx, customer, {
    documentType: type,
    documentId: view.id,
    attachPdf: true,
    ...message,
  });
  return { ...view, lastEmail: lastEmail ?? view.lastEmail, portalUrl: link.url, emailedTo };
}

/** The fields of a document whose status moved (decisions §5: statuses in upper case). */
export const statusChange = (oldStatus: string, newStatus: string) => ({
  oldStatus: oldStatus.toUpperCase(),
  newStatus: newStatus.toUpperCase(),
});

/**
 * The events of a move, in its transaction: the trigger's own event (if any), then
 * `<resource>.status_changed` when the status actually moved and the trigger announces it.
 */
export async function emitMove(
  ctx: Ctx,
  events: { specific: CatalogEvent | null; statusChanged: CatalogEvent | null },
  oldStatus: string,
  newStatus: string,
  data: Record<string, unknown>,
): Promise<void> {
  const payload = { ...data, ...statusChange(oldStatus, newStatus) };
  if (events.specific) await emit(ctx, events.specific, payload);
  if (events.statusChanged && oldStatus !== newStatus) await emit(ctx, events.statusChanged, payload);
}

/** The totals part of a document's REST shape (lines, subtotal, rate, tax, total). */
export const totalsView = (
  r: { subtotalCents: number; taxRate: string; taxCents: number; totalCents: number },
  lines: LineRow[],
) => ({
  lineItems: lines.map(lineView),
  subtotal: fromCents(r.subtotalCents),
  taxRate: Number(r.taxRate),
  tax: fromCents(r.taxCents),
  total: fromCents(r.totalCents),
});

/** A document's list filters every type has: the organization, `status`, `customerId`. */
export function documentFilters(
  ctx: Ctx,
  table: DocumentTable,
  q: { status?: string | undefined; customerId?: string | undefined },
): SQL[] {
  const t = table as typeof invoices;
  const where: SQL[] = [eq(t.organizationId, ctx.organizationId)];
  // One or more states, comma-separated (`sent,overdue`), checked by the list's schema.
  const statuses = listValues(q.status);
  if (statuses) where.push(statuses.length === 1 ? eq(t.status, statuses[0] as string) : inArray(t.status, statuses));
  if (q.customerId) where.push(eq(t.customerId, q.customerId));
  return where;
}

/**
 * One page of documents in their list shape: the rows matching `where`, each with its
 * lines and its latest mail (one query each for the whole page).
 */
export async function documentPage<T extends DocumentTable, L, V>(
  ctx: Ctx,
  source: {
    table: T;
    lines: { of(ctx: Ctx, ids: string[]): Promise<Map<string, L[]>> };
    type: MailDocumentType;
  },
  where: SQL[],
  page: Page,
  view: (row: T['$inferSelect'], lines: L[], lastEmail: LastEmail | null) => V,
) {
  const table = source.table as typeof invoices;
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, table, and(...where), page);
  const ids = rows.map((r) => r.id);
  const lines = await source.lines.of(ctx, ids);
  const mails = await lastEmailsOf(ctx, source.type, ids);
  return {
    rows: (rows as T['$inferSelect'][]).map((r) => view(r, lines.get(r.id) ?? [], mails.get(r.id) ?? null)),
    ...more,
  };
}
