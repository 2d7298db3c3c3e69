import { and, asc, eq, inArray } from 'drizzle-orm';
import type { estimateLineItems, estimates, invoiceLineItems, invoices } from '../../db/schema/index.js';
import { invalidState, notFound } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { Ctx } from '../../platform/tenancy.js';
import { type CustomerRow, customerById, requireCustomer, requireProperty } from '../customers/customers.refs.js';
import type { LastEmail, MailDocumentType } from '../mail/mail.service.js';
import { createPortalLink, type PortalDocumentType } from '../portal/portal.service.js';
import { getOrgSettings, type OrgSettings } from '../settings/settings.service.js';
import { queueDocumentMail } from './document-mail.js';
import {
  finish,
  type LineItemInputT,
  lineRows,
  type PricedDocument,
  priceLines,
  storedToPriced,
  taxRateFor,
  totalsColumns,
} from './line-items.js';

/*
 * What every billing document with lines, a customer and a send action does the
 * same way (invoices and estimates today; purchase orders and bills may follow):
 * the customer/property checks, pricing and re-pricing, line storage, the send
 * (portal link + queued mail) and the portal view. Each resource keeps its own
 * service and routes, its states and its events; only this plumbing is shared.
 */

type DocumentTable = typeof invoices | typeof estimates;

/** Finding, locking and deleting one document type's rows (`resource`: `invoice`, `estimate`). */
export function documentRows<T extends DocumentTable>(table: T, resource: string) {
  type Row = T['$inferSelect'];
  const t = table as typeof invoices;
  const label = `${resource.charAt(0).toUpperCase()}${resource.slice(1)}`;
  const byId = (ctx: Ctx, id: string) => and(eq(t.organizationId, ctx.organizationId), eq(t.id, id));
  /** The row, locked FOR UPDATE when it is about to change; 404 when missing or another organization's. */
  const find = async (ctx: Ctx, id: string, lock: boolean): Promise<Row> => {
    const query = ctx.tx.select().from(t).where(byId(ctx, id));
    const [row] = lock ? await query.for('update') : await query;
    if (!row) throw notFound(label);
    return row as Row;
  };
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
  };
}

/** The columns every edit writes: parties, notes, totals when re-priced, and the time. */
export function editedColumns(
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

type LineTable = typeof invoiceLineItems | typeof estimateLineItems;
type LineRow = typeof invoiceLineItems.$inferSelect | typeof estimateLineItems.$inferSelect;

/** Reads and writes one document type's lines (`parent`: the column naming the document). */
export function documentLines<T extends LineTable, K extends 'invoiceId' | 'estimateId'>(table: T, parent: K) {
  type Row = T['$inferSelect'];
  const t = table as typeof invoiceLineItems;
  const parentColumn = (table as unknown as Record<K, typeof invoiceLineItems.invoiceId>)[parent];
  const insert = async (ctx: Ctx, documentId: string, priced: PricedDocument) => {
    await ctx.tx.insert(t).values(
      lineRows(priced.lines).map(
        (l) =>
          ({
            ...l,
            id: newId('lin'),
            organizationId: ctx.organizationId,
            [parent]: documentId,
          }) as typeof invoiceLineItems.$inferInsert,
      ),
    );
  };
  return {
    /** Lines of each document, in position order; every id gets an entry. */
    async of(ctx: Ctx, ids: string[]): Promise<Map<string, Row[]>> {
      const byDocument = new Map<string, Row[]>(ids.map((id) => [id, []]));
      if (ids.length === 0) return byDocument;
      const rows = (await ctx.tx
        .select()
        .from(t)
        .where(and(eq(t.organizationId, ctx.organizationId), inArray(parentColumn, ids)))
        .orderBy(asc(parentColumn), asc(t.position))) as unknown as Row[];
      for (const row of rows) byDocument.get((row as Record<K, string>)[parent])?.push(row);
      return byDocument;
    },
    insert,
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

export interface DocumentPatch {
  customerId?: string | undefined;
  propertyId?: string | null | undefined;
  lineItems?: LineItemInputT[] | undefined;
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
      `A ${status.replace('_', ' ')} ${resource} accepts changes to ${allowed.join(' and ')} only (not ${refused.join(', ')})`,
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
  row: { customerId: string; propertyId: string | null },
  patch: DocumentPatch,
  storedLines: () => Promise<LineRow[]>,
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
    else priced = finish((await storedLines()).map(storedToPriced), rate);
  }
  return { customerId, propertyId, priced };
}

export interface SentDocument {
  portalUrl: string;
  emailedTo: string[];
  /** The queued mail, or null when the customer has no address (nothing queued). */
  lastEmail: LastEmail | null;
}

/**
 * The send of a document after its transition: a fresh portal link and the mail to
 * the customer queued in the same transaction, with the document's PDF attached by
 * the worker. `compose` writes the message from the org settings, the sender's name
 * and the link.
 */
export async function sendDocumentLink(
  ctx: Ctx,
  doc: { type: PortalDocumentType & MailDocumentType; id: string; customerId: string },
  baseUrl: string,
  compose: (m: { settings: OrgSettings; from: string; url: string }) => { subject: string; lines: string[] },
): Promise<SentDocument> {
  const customer = await customerById(ctx, doc.customerId);
  const settings = await getOrgSettings(ctx);
  const link = await createPortalLink(ctx, baseUrl, doc.type, doc.id);
  const message = compose({ settings, from: settings.companyName ?? settings.name, url: link.url });
  const { emailedTo, lastEmail } = await queueDocumentMail(ctx, customer, {
    documentType: doc.type,
    documentId: doc.id,
    attachPdf: true,
    ...message,
  });
  return { portalUrl: link.url, emailedTo, lastEmail };
}
