/*
 * What an invoice's or estimate's PDF shows, read inside the tenant's transaction: the
 * organization and the customer (their modules' functions) and the document's own lines and
 * totals. Drawing it is `platform/pdf.ts`, once the transaction has ended.
 */

import type { PdfDocumentData, PdfSource } from '../../platform/pdf.js';
import type { Ctx } from '../../platform/tenancy.js';
import { addressLines, type CustomerRow, customerById, customerName } from '../customers/customers.refs.js';
import { serviceAddressOf } from '../properties/properties.refs.js';
import { getOrgSettings, type OrgSettings } from '../settings/settings.service.js';

export function companyOf(settings: OrgSettings): PdfDocumentData['company'] {
  return {
    name: settings.companyName ?? settings.name,
    email: settings.companyEmail,
    phone: settings.companyPhone,
    address: settings.companyAddress,
  };
}

export function customerOf(c: CustomerRow): PdfDocumentData['customer'] {
  return {
    name: customerName(c),
    company: c.company,
    email: c.email,
    address: addressLines(c.billingAddress, c.billingCity, c.billingState, c.billingZip),
  };
}

/** Who a billing document is from and to, and its currency: the header of every PDF. */
export async function pdfParties(ctx: Ctx, customerId: string) {
  const settings = await getOrgSettings(ctx);
  return {
    currency: settings.currency,
    company: companyOf(settings),
    customer: customerOf(await customerById(ctx, customerId)),
  };
}

/** The document's own part of its PDF, as in its REST shape. */
interface PdfDocumentView {
  customerId: string;
  propertyId?: string | null;
  status: string;
  lineItems: PdfDocumentData['lines'];
  subtotal: number;
  taxRate: number;
  tax: number;
  total: number;
  notes: string | null;
}

/**
 * What a billing document's PDF (`<number>.pdf`) shows: its header from the organization
 * and the customer, then `view`'s lines and totals; `extra` carries what only some types
 * print (an invoice's payments and balance). Read inside a tenant transaction; drawn by
 * `renderPdf` after it has ended (drawing takes a while and needs no rows).
 */
export async function documentPdf(
  ctx: Ctx,
  head: { title: PdfDocumentData['title']; number: string; facts: PdfDocumentData['facts'] },
  view: PdfDocumentView,
  extra: Pick<PdfDocumentData, 'payments' | 'amountPaid' | 'balance'> = {},
): Promise<PdfSource> {
  const data: PdfDocumentData = {
    ...head,
    status: view.status,
    ...(await pdfParties(ctx, view.customerId)),
    serviceAddress: await serviceAddressOf(ctx, view.propertyId ?? null),
    lines: view.lineItems,
    subtotal: view.subtotal,
    taxRate: view.taxRate,
    tax: view.tax,
    total: view.total,
    ...extra,
    notes: view.notes,
  };
  return { filename: `${head.number}.pdf`, data };
}
