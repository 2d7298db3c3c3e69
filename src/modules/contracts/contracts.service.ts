import { createHash } from 'node:crypto';
import { and, asc, eq, type SQL, sql } from 'drizzle-orm';
import { type ContractLine, contractActivity, contracts } from '../../db/schema/index.js';
import { withCalendarDates } from '../../platform/calendar-date.js';
import { stamp } from '../../platform/dates.js';
import { invalidField, invalidState } from '../../platform/errors.js';
import { emit } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import { checkQuantity, computeTotals, fromCents, toCents } from '../../platform/money.js';
import { ownedRows } from '../../platform/owned-rows.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import { canTake, next, withArticle } from '../../platform/state-machine.js';
import type { Ctx } from '../../platform/tenancy.js';
import { findTemplate } from '../contract-templates/contract-templates.service.js';
import { renderTemplate } from '../contract-templates/template-render.js';
import {
  addressLine,
  type CustomerRow,
  customerName,
  findCustomer,
  requireCustomer,
  requireProperty,
} from '../customers/customers.refs.js';
import { followContractEnd } from '../jobs/schedules/schedules.service.js';
import { lastEmailOf, queueMail } from '../mail/mail.service.js';
import { mailOwners } from '../mail/owner-notices.js';
import { createPortalLink } from '../portal-links/portal-links.service.js';
import { findProperty } from '../properties/properties.refs.js';
import { getOrgSettings, orgTimezone } from '../settings/settings.service.js';
import { CONTRACT_STATUSES, type ContractStatus, type ContractTrigger, contractMachine } from './contracts.states.js';

export type ContractRow = typeof contracts.$inferSelect;

export function contractView(r: ContractRow) {
  return {
    id: r.id,
    title: r.title,
    customerId: r.customerId,
    propertyId: r.propertyId,
    templateId: r.templateId,
    amendsContractId: r.amendsContractId,
    status: r.status as ContractStatus,
    startDate: r.startDate,
    endDate: r.endDate,
    totalValue: fromCents(r.totalValueCents),
    services: r.services.map((l) => ({
      description: l.description,
      unitPrice: fromCents(l.unitPriceCents),
      quantity: l.quantity,
      amount: fromCents(l.amountCents),
    })),
    terms: r.terms,
    sentAt: r.sentAt,
    signedAt: r.signedAt,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

export function signatureOf(r: ContractRow) {
  if (!r.signedAt || !r.signerName) return null;
  return {
    signerName: r.signerName,
    signedAt: r.signedAt,
    ipAddress: r.signerIp ?? '',
    userAgent: r.signerUserAgent ?? '',
    contentSha256: r.signedContentSha256 ?? '',
  };
}

/** Staff actions carry the user/API key id; the customer (portal) and the worker have none. */
export async function recordContractActivity(
  ctx: Ctx,
  contractId: string,
  type: string,
  description: string,
  actorId: string | null = ctx.actor.kind === 'portal' ? null : ctx.actor.id,
) {
  await ctx.tx.insert(contractActivity).values({
    id: newId('cac'),
    organizationId: ctx.organizationId,
    contractId,
    type,
    description,
    actorId,
    createdAt: stamp(),
  });
}

export async function contractActivityOf(ctx: Ctx, contractId: string) {
  const rows = await ctx.tx
    .select()
    .from(contractActivity)
    .where(and(eq(contractActivity.organizationId, ctx.organizationId), eq(contractActivity.contractId, contractId)))
    .orderBy(asc(contractActivity.createdAt), asc(contractActivity.id));
  return rows.map(activityView);
}

function activityView(a: typeof contractActivity.$inferSelect) {
  return { id: a.id, type: a.type, description: a.description, actorId: a.actorId, createdAt: a.createdAt };
}

/** The amendments made to a contract, oldest first. */
async function amendmentsOf(ctx: Ctx, contractId: string) {
  return ctx.tx
    .select({ id: contracts.id, status: contracts.status, createdAt: contracts.createdAt })
    .from(contracts)
    .where(and(eq(contracts.organizationId, ctx.organizationId), eq(contracts.amendsContractId, contractId)))
    .orderBy(asc(contracts.createdAt), asc(contracts.id));
}

export async function contractDetail(ctx: Ctx, r: ContractRow) {
  return {
    ...contractView(r),
    content: r.content,
    signature: signatureOf(r),
    amendments: (await amendmentsOf(ctx, r.id)).map((a) => ({ ...a, status: a.status as ContractStatus })),
    activity: await contractActivityOf(ctx, r.id),
    lastEmail: await lastEmailOf(ctx, 'contract', r.id),
  };
}

const contractRows = ownedRows(contracts, 'Contract');
const byId = contractRows.mine;

export const findContract = contractRows.find;

interface LineIn {
  description: string;
  unitPrice: number;
  quantity?: number | undefined;
}

/** Lines in cents; totalValue = Σ round(quantity × unitPrice), i.e. computeTotals with no tax. */
function priceLines(lines: LineIn[]): { lines: ContractLine[]; totalCents: number } {
  const priced = lines.map((l, i) => {
    const quantity = l.quantity ?? 1;
    checkQuantity(quantity, `services.${i}.quantity`);
    return {
      description: l.description.trim(),
      quantity,
      unitPriceCents: toCents(l.unitPrice, `services.${i}.unitPrice`),
    };
  });
  const totals = computeTotals(
    priced.map((p) => ({ quantity: p.quantity, unitPriceCents: p.unitPriceCents, taxable: false })),
    0,
  );
  return {
    lines: priced.map((p, i) => ({ ...p, amountCents: totals.lineAmountsCents[i] as number })),
    totalCents: totals.totalCents,
  };
}

interface ContentInput {
  title: string;
  templateBody: string | null;
  terms: string | null;
  startDate: string | null;
  endDate: string | null;
  totalCents: number;
  customer: CustomerRow;
  propertyId: string | null;
}

/** The text the customer signs: the filled template, then the terms. */
async function buildContent(ctx: Ctx, c: ContentInput): Promise<string> {
  const parts: string[] = [];
  if (c.templateBody !== null) {
    const settings = await getOrgSettings(ctx);
    let propertyAddress = '';
    if (c.propertyId) {
      const p = await findProperty(ctx, c.propertyId);
      if (p) propertyAddress = addressLine(p.street, p.city, p.state, p.zip);
    }
    parts.push(
      renderTemplate(c.templateBody, {
        'customer.name': customerName(c.customer),
        'customer.email': c.customer.email ?? '',
        'customer.phone': c.customer.phone ?? '',
        'customer.address': addressLine(
          c.customer.billingAddress,
          c.customer.billingCity,
          c.customer.billingState,
          c.customer.billingZip,
        ),
        'company.name': settings.companyName ?? settings.name,
        'property.address': propertyAddress,
        title: c.title,
        startDate: c.startDate ?? '',
        endDate: c.endDate ?? '',
        totalValue: fromCents(c.totalCents).toFixed(2),
      }),
    );
  }
  if (c.terms) parts.push(c.terms);
  return parts.join('\n\n');
}

/** Request fields that take a date or a date-time (its calendar date in the org's timezone). */
const CONTRACT_DATES = ['startDate', 'endDate'] as const;

function checkDates(startDate: string | null, endDate: string | null) {
  if (startDate && endDate && endDate < startDate) throw invalidField('endDate', 'must not be before startDate');
}

export interface CreateContractInput {
  title: string;
  customerId: string;
  propertyId?: string | undefined;
  templateId?: string | undefined;
  startDate?: string | undefined;
  endDate?: string | undefined;
  services?: LineIn[] | undefined;
  terms?: string | undefined;
}

export async function createContract(ctx: Ctx, body: CreateContractInput) {
  const input = await withCalendarDates(body, CONTRACT_DATES, () => orgTimezone(ctx));
  const customer = await requireCustomer(ctx, input.customerId);
  if (input.propertyId !== undefined) await requireProperty(ctx, input.customerId, input.propertyId);
  const template = input.templateId !== undefined ? await findTemplate(ctx, input.templateId, 'templateId') : null;
  checkDates(input.startDate ?? null, input.endDate ?? null);
  const { lines, totalCents } = priceLines(input.services ?? []);
  const title = input.title.trim();
  const content = await buildContent(ctx, {
    title,
    templateBody: template?.body ?? null,
    terms: input.terms ?? null,
    startDate: input.startDate ?? null,
    endDate: input.endDate ?? null,
    totalCents,
    customer,
    propertyId: input.propertyId ?? null,
  });
  const now = new Date();
  const [row] = await ctx.tx
    .insert(contracts)
    .values({
      id: newId('con'),
      organizationId: ctx.organizationId,
      title,
      customerId: input.customerId,
      propertyId: input.propertyId ?? null,
      templateId: template?.id ?? null,
      templateBody: template?.body ?? null,
      status: 'draft',
      startDate: input.startDate ?? null,
      endDate: input.endDate ?? null,
      services: lines,
      totalValueCents: totalCents,
      terms: input.terms ?? null,
      content,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  const contract = row as ContractRow;
  await recordContractActivity(ctx, contract.id, 'created', `Contract "${title}" created`);
  return contractDetail(ctx, contract);
}

export async function getContract(ctx: Ctx, id: string) {
  return contractDetail(ctx, await findContract(ctx, id));
}

export async function listContracts(
  ctx: Ctx,
  q: { status?: ContractStatus | undefined; customerId?: string | undefined },
  page: Page,
) {
  const where: SQL[] = [eq(contracts.organizationId, ctx.organizationId)];
  if (q.status) where.push(eq(contracts.status, q.status));
  if (q.customerId) where.push(eq(contracts.customerId, q.customerId));
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, contracts, and(...where), page);
  return { rows: rows.map(contractView), ...more };
}

export interface UpdateContractInput {
  title?: string | undefined;
  propertyId?: string | null | undefined;
  startDate?: string | null | undefined;
  endDate?: string | null | undefined;
  services?: LineIn[] | undefined;
  terms?: string | null | undefined;
}

/**
 * A contract's terms with `input` applied over `base` (an edit of a draft, or an
 * amendment prefilled from a signed contract): checked, re-priced, and the content
 * rendered again from the base's template for the same customer.
 */
async function termsOver(ctx: Ctx, base: ContractRow, input: UpdateContractInput) {
  const propertyId = input.propertyId === undefined ? base.propertyId : input.propertyId;
  if (input.propertyId) await requireProperty(ctx, base.customerId, input.propertyId);
  const startDate = input.startDate === undefined ? base.startDate : input.startDate;
  const endDate = input.endDate === undefined ? base.endDate : input.endDate;
  checkDates(startDate, endDate);
  const priced = input.services ? priceLines(input.services) : null;
  const title = input.title?.trim() ?? base.title;
  const terms = input.terms === undefined ? base.terms : input.terms;
  const totalCents = priced?.totalCents ?? base.totalValueCents;
  const customer = await findCustomer(ctx, base.customerId);
  const content = await buildContent(ctx, {
    title,
    templateBody: base.templateBody,
    terms,
    startDate,
    endDate,
    totalCents,
    customer: customer as CustomerRow,
    propertyId,
  });
  return { title, propertyId, startDate, endDate, terms, priced, totalCents, content };
}

export async function updateContract(ctx: Ctx, id: string, body: UpdateContractInput) {
  const input = await withCalendarDates(body, CONTRACT_DATES, () => orgTimezone(ctx));
  const current = await findContract(ctx, id, true);
  if (!canTake(contractMachine, current.status as ContractStatus, 'edit')) {
    throw invalidState(`Only draft contracts can be edited; this one is ${current.status} (create a new contract)`);
  }
  const changed = Object.keys(input).filter((k) => input[k as keyof UpdateContractInput] !== undefined);
  if (changed.length === 0) return contractDetail(ctx, current);
  const { title, propertyId, startDate, endDate, terms, priced, content } = await termsOver(ctx, current, input);
  const [row] = await ctx.tx
    .update(contracts)
    .set({
      title,
      propertyId,
      startDate,
      endDate,
      terms,
      content,
      ...(priced ? { services: priced.lines, totalValueCents: priced.totalCents } : {}),
      updatedAt: new Date(),
    })
    .where(byId(ctx, id))
    .returning();
  await recordContractActivity(ctx, id, 'updated', `Updated ${changed.join(', ')}`);
  return contractDetail(ctx, row as ContractRow);
}

/**
 * An amendment of a signed or active contract (spec 3.4): a new draft contract for the
 * same customer, prefilled from the original (title, property, dates, services, terms and
 * the original's template text) with `input` applied over it, then sent and signed like
 * any contract. The original is not changed: it stays signed or active with its own
 * dates, and its activity log records `amended` with the amendment's id. Once signed,
 * the amendment's terms supersede the original's from the amendment's startDate.
 */
export async function amendContract(ctx: Ctx, id: string, body: UpdateContractInput) {
  const input = await withCalendarDates(body, CONTRACT_DATES, () => orgTimezone(ctx));
  const original = await findContract(ctx, id, true);
  if (!canTake(contractMachine, original.status as ContractStatus, 'amend')) {
    throw invalidState(`Only signed or active contracts can be amended; this one is ${original.status}`);
  }
  const { title, propertyId, startDate, endDate, terms, priced, totalCents, content } = await termsOver(
    ctx,
    original,
    input,
  );
  const now = new Date();
  const [row] = await ctx.tx
    .insert(contracts)
    .values({
      id: newId('con'),
      organizationId: ctx.organizationId,
      title,
      customerId: original.customerId,
      propertyId,
      templateId: original.templateId,
      templateBody: original.templateBody,
      amendsContractId: original.id,
      status: 'draft',
      startDate,
      endDate,
      services: priced?.lines ?? original.services,
      totalValueCents: totalCents,
      terms,
      content,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  const amendment = row as ContractRow;
  await recordContractActivity(ctx, amendment.id, 'created', `Amendment of ${original.id} created`);
  await recordContractActivity(ctx, original.id, 'amended', `Amendment ${amendment.id} created`);
  return contractDetail(ctx, amendment);
}

/** The move `trigger` makes from the contract's status, or 409 `A draft contract cannot be <done>` (`An active …`). */
function requireMove(current: ContractRow, trigger: ContractTrigger, done: string) {
  const from = current.status as ContractStatus;
  const to = next(contractMachine, from, trigger);
  if (to === undefined) throw invalidState(`${withArticle(`${from} contract`, true)} cannot be ${done}`);
  return { from, to };
}

/** A re-send (sent → sent) is not a status change, so it carries no oldStatus/newStatus. */
const eventData = (r: ContractRow, from: ContractStatus, to: ContractStatus) => ({
  contractId: r.id,
  contract: contractView(r),
  ...(from === to ? {} : { oldStatus: from.toUpperCase(), newStatus: to.toUpperCase() }),
});

export interface SendResult {
  contract: Awaited<ReturnType<typeof contractDetail>>;
  portalUrl: string;
}

/**
 * Sends for signature: a fresh portal link, an activity entry, `contract.sent` and the
 * mail queued in this transaction (the worker delivers it; a rolled-back send mails nobody).
 */
export async function sendContract(ctx: Ctx, id: string, baseUrl: string): Promise<SendResult> {
  const current = await findContract(ctx, id, true);
  const { from, to } = requireMove(current, 'send', 'sent');
  const customer = await findCustomer(ctx, current.customerId);
  const recipients = [...new Set([customer?.email, ...(customer?.additionalEmails ?? [])].filter(Boolean))] as string[];
  const link = await createPortalLink(ctx, baseUrl, 'contract', id);
  const now = new Date();
  const [row] = await ctx.tx
    .update(contracts)
    .set({ status: to, sentAt: current.sentAt ?? now, updatedAt: now })
    .where(byId(ctx, id))
    .returning();
  const updated = row as ContractRow;
  await recordContractActivity(
    ctx,
    id,
    'sent',
    recipients.length > 0
      ? `Sent for signature to ${recipients.join(', ')}`
      : 'Signing link created (customer has no email)',
  );
  await emit(ctx, 'contract.sent', eventData(updated, from, to));
  if (recipients.length > 0) {
    const settings = await getOrgSettings(ctx);
    const company = settings.companyName ?? settings.name;
    await queueMail(ctx, {
      documentType: 'contract',
      documentId: id,
      to: recipients,
      subject: `${company}: please review and sign "${updated.title}"`,
      text: `Hello ${customer ? customerName(customer) : ''},\n\n${company} sent you the contract "${updated.title}" to review and sign:\n\n${link.url}\n\nThe link expires on ${link.expiresAt.toISOString().slice(0, 10)}.`,
    });
  }
  return { contract: await contractDetail(ctx, updated), portalUrl: link.url };
}

export async function cancelContract(ctx: Ctx, id: string) {
  const current = await findContract(ctx, id, true);
  const { from, to } = requireMove(current, 'cancel', 'canceled');
  const now = new Date();
  const [row] = await ctx.tx
    .update(contracts)
    .set({ status: to, canceledAt: now, updatedAt: now })
    .where(byId(ctx, id))
    .returning();
  await recordContractActivity(ctx, id, 'canceled', `Canceled (was ${from})`);
  // Its recurring schedule ends with it, in this transaction.
  await followContractEnd(ctx, id, now);
  return contractDetail(ctx, row as ContractRow);
}

/** What the customer sees in the portal: no internal activity or actor ids. */
export function portalContractView(r: ContractRow) {
  const sig = signatureOf(r);
  return {
    ...contractView(r),
    content: r.content,
    signature: sig ? { signerName: sig.signerName, signedAt: sig.signedAt, contentSha256: sig.contentSha256 } : null,
  };
}

export async function viewContractInPortal(ctx: Ctx, id: string) {
  const row = await findContract(ctx, id);
  await recordContractActivity(ctx, id, 'viewed', 'Viewed by the customer in the portal', null);
  return portalContractView(row);
}

export async function signContractInPortal(
  ctx: Ctx,
  id: string,
  body: Record<string, unknown>,
  meta: { ip: string; userAgent: string },
) {
  const signerName = typeof body.signerName === 'string' ? body.signerName.trim() : '';
  if (!signerName) throw invalidField('signerName', 'is required: the name of the person signing');
  const current = await findContract(ctx, id, true);
  if (current.signedAt) throw invalidState('This contract is already signed');
  const { from, to } = requireMove(current, 'sign', 'signed');
  const now = new Date();
  const [row] = await ctx.tx
    .update(contracts)
    .set({
      status: to,
      signedAt: now,
      signerName,
      signerIp: meta.ip,
      signerUserAgent: meta.userAgent,
      signedContentSha256: createHash('sha256').update(current.content, 'utf8').digest('hex'),
      updatedAt: now,
    })
    .where(byId(ctx, id))
    .returning();
  const updated = row as ContractRow;
  await recordContractActivity(ctx, id, 'signed', `Signed by ${signerName}`, null);
  if (updated.amendsContractId) {
    const when = updated.startDate ? `from ${updated.startDate}` : 'once it is active';
    await recordContractActivity(
      ctx,
      updated.amendsContractId,
      'amendment_signed',
      `Amendment ${id} signed by ${signerName}; its terms supersede this contract's ${when}`,
      null,
    );
  }
  await emit(ctx, 'contract.signed', eventData(updated, from, to));
  // The office hears of it at once (setting notifyOwners), in the signature's own transaction.
  await mailOwners(ctx, {
    documentId: id,
    subject: `Contract "${updated.title}" signed by ${signerName}`,
    lines: [
      `${signerName} signed the contract "${updated.title}" through the customer link.`,
      updated.amendsContractId
        ? `It amends contract ${updated.amendsContractId}; its terms supersede that contract's.`
        : `The signed copy and its evidence are on the contract (GET /api/contracts/${id}).`,
    ],
  });
  return portalContractView(updated);
}

/** Analytics by SQL aggregates over the organization's contracts (one query, nothing loaded). */
export async function contractAnalytics(ctx: Ctx) {
  const perStatus = Object.fromEntries(
    CONTRACT_STATUSES.map((s) => [`n_${s}`, sql<number>`count(*) FILTER (WHERE ${contracts.status} = ${s})::int`]),
  );
  const [row] = await ctx.tx
    .select({
      total: sql<number>`count(*)::int`,
      everSent: sql<number>`count(*) FILTER (WHERE ${contracts.sentAt} IS NOT NULL)::int`,
      everSigned: sql<number>`count(*) FILTER (WHERE ${contracts.sentAt} IS NOT NULL AND ${contracts.signedAt} IS NOT NULL)::int`,
      avgSeconds: sql<
        string | null
      >`avg(extract(epoch FROM ${contracts.signedAt} - ${contracts.sentAt})) FILTER (WHERE ${contracts.signedAt} IS NOT NULL AND ${contracts.sentAt} IS NOT NULL)`,
      activeCents: sql<string>`coalesce(sum(${contracts.totalValueCents}) FILTER (WHERE ${contracts.status} = 'active'), 0)::bigint`,
      ...perStatus,
    })
    .from(contracts)
    .where(eq(contracts.organizationId, ctx.organizationId));
  const r = row as Record<string, unknown>;
  const sent = Number(r.everSent);
  const signed = Number(r.everSigned);
  const avg = r.avgSeconds === null || r.avgSeconds === undefined ? null : Number(r.avgSeconds);
  return {
    totalContracts: Number(r.total),
    byStatus: Object.fromEntries(CONTRACT_STATUSES.map((s) => [s, Number(r[`n_${s}`])])) as Record<
      ContractStatus,
      number
    >,
    signingRate: sent === 0 ? null : Math.round((signed / sent) * 10_000) / 10_000,
    averageHoursToSign: avg === null ? null : Math.round((avg / 3600) * 100) / 100,
    activeRevenue: fromCents(Number(r.activeCents)),
  };
}

/** GET /api/contract-activity/:id, oldest first, one page (operations.md §1). */
export async function activityForContract(ctx: Ctx, id: string, page: Page) {
  await findContract(ctx, id);
  const where = and(eq(contractActivity.organizationId, ctx.organizationId), eq(contractActivity.contractId, id));
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, contractActivity, where, page, {
    columns: [contractActivity.createdAt, contractActivity.id],
    direction: 'asc',
  });
  return { rows: rows.map(activityView), ...more };
}
