import { and, desc, eq, gte, ne, or, type SQL, sql } from 'drizzle-orm';
import { requests, type SmsConsentEvidence } from '../../db/schema/index.js';
import { today } from '../../platform/dates.js';
import { invalidField } from '../../platform/errors.js';
import { emit } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import { ownedRows } from '../../platform/owned-rows.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import { take } from '../../platform/state-machine.js';
import type { Ctx } from '../../platform/tenancy.js';
import { customerByContact } from '../customers/customers.refs.js';
import { mailOwners } from '../mail/owner-notices.js';
import { bookableServices } from '../services/services.refs.js';
import { getOrgSettings } from '../settings/settings.service.js';
import { type PublicRequestInput, SMS_CONSENT_WORDING } from './requests.schemas.js';
import { type RequestAction, type RequestStatus, requestMachine } from './requests.states.js';

export type RequestRow = typeof requests.$inferSelect;

/** Same email or phone within this many days makes a request a duplicate of the earlier one. */
const DUPLICATE_DAYS = 30;

export function requestView(r: RequestRow) {
  return {
    id: r.id,
    status: r.status as RequestStatus,
    firstName: r.firstName,
    lastName: r.lastName,
    email: r.email,
    phone: r.phone,
    address: { street: r.street, city: r.city, state: r.state, zip: r.zip },
    serviceIds: r.serviceIds,
    description: r.description,
    preferredDates: r.preferredDates,
    preferredTime: r.preferredTime as 'morning' | 'afternoon' | 'any',
    smsConsent: r.smsConsent,
    smsConsentEvidence: r.smsConsentEvidence,
    customerId: r.customerId,
    estimateId: r.estimateId,
    jobId: r.jobId,
    declineReason: r.declineReason,
    convertedAt: r.convertedAt,
    declinedAt: r.declinedAt,
    archivedAt: r.archivedAt,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}
export type RequestView = ReturnType<typeof requestView>;

const blank = (v: string | undefined) => (v === undefined || v.trim() === '' ? null : v.trim());
const { mine, find: rowOf } = ownedRows(requests, 'Request');

/** Where a request came from, as the route saw it. */
export interface RequestOrigin {
  ip: string;
  at: Date;
}

/**
 * Stores a request from the public form (the spam checks are done: ALTCHA spent, limits taken),
 * checks what JSON Schema cannot (email or phone, dates not past in the organization's
 * timezone, bookable services of this organization), tells the owners by mail, emits
 * request.created, all in the caller's transaction.
 */
export async function createRequest(ctx: Ctx, input: PublicRequestInput, origin: RequestOrigin): Promise<RequestView> {
  const email = blank(input.email);
  const phone = blank(input.phone);
  if (!email && !phone) throw invalidField('email', 'give an email address or a phone number');
  if (phone && phone.replace(/\D/g, '').length < 7) throw invalidField('phone', 'must have at least 7 digits');
  const settings = await getOrgSettings(ctx);
  const todayDate = today(settings.timezone, origin.at);
  for (const [i, d] of (input.preferredDates ?? []).entries()) {
    if (d < todayDate) throw invalidField(`preferredDates.${i}`, `must be today (${todayDate}) or later`);
  }
  const serviceIds = input.serviceIds ?? [];
  if (serviceIds.length > 0) {
    const offered = new Set((await bookableServices(ctx)).map((s) => s.id));
    const unknown = serviceIds.find((id) => !offered.has(id));
    if (unknown !== undefined) throw invalidField('serviceIds', `no bookable service ${unknown}`);
  }
  const evidence: SmsConsentEvidence | null =
    input.smsConsent === true ? { at: origin.at.toISOString(), ip: origin.ip, wording: SMS_CONSENT_WORDING } : null;
  const [row] = await ctx.tx
    .insert(requests)
    .values({
      organizationId: ctx.organizationId,
      id: newId('req'),
      firstName: input.firstName.trim(),
      lastName: blank(input.lastName),
      email,
      phone,
      street: input.address.street.trim(),
      city: input.address.city.trim(),
      state: blank(input.address.state),
      zip: blank(input.address.zip),
      serviceIds,
      description: input.description.trim(),
      preferredDates: [...(input.preferredDates ?? [])].sort(),
      preferredTime: input.preferredTime ?? 'any',
      smsConsent: evidence !== null,
      smsConsentEvidence: evidence,
      sourceIp: origin.ip,
      createdAt: origin.at,
      updatedAt: origin.at,
    })
    .returning();
  const view = requestView(row as RequestRow);
  await emit(ctx, 'request.created', { requestId: view.id, request: view });
  const who = [view.firstName, view.lastName].filter(Boolean).join(' ');
  // Always sent (operations.md §12: the owners get a mail for each new request), whatever notifyOwners says.
  await mailOwners(ctx, {
    always: { documentType: 'request' },
    documentId: view.id,
    subject: `New request from ${who}`.slice(0, 200),
    lines: [
      `${who} sent a request through your booking form:`,
      view.description,
      `Address: ${[view.address.street, view.address.city, view.address.state, view.address.zip].filter(Boolean).join(', ')}`,
      ...(email ? [`Email: ${email}`] : []),
      ...(phone ? [`Phone: ${phone}`] : []),
      ...(view.preferredDates.length > 0
        ? [`Preferred dates: ${view.preferredDates.join(', ')} (${view.preferredTime})`]
        : []),
      `Open it in the console (Requests) or GET /api/requests/${view.id}.`,
    ],
  });
  return view;
}

export async function listRequests(ctx: Ctx, filter: { status?: RequestStatus | undefined }, page: Page) {
  const where: SQL[] = [eq(requests.organizationId, ctx.organizationId)];
  if (filter.status !== undefined) where.push(eq(requests.status, filter.status));
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, requests, and(...where), page);
  return { rows: rows.map(requestView), ...more };
}

/** The latest earlier request (last 30 days) with the same email (any case) or phone digits. */
async function duplicateOf(ctx: Ctx, r: RequestRow): Promise<string | null> {
  const digits = r.phone?.replace(/\D/g, '') ?? '';
  const same: SQL[] = [];
  if (r.email) same.push(sql`lower(${requests.email}) = ${r.email.toLowerCase()}`);
  if (digits.length >= 7) same.push(sql`regexp_replace(${requests.phone}, '\\D', '', 'g') = ${digits}`);
  if (same.length === 0) return null;
  const since = new Date(r.createdAt.getTime() - DUPLICATE_DAYS * 86_400_000);
  const [row] = await ctx.tx
    .select({ id: requests.id })
    .from(requests)
    .where(
      and(
        eq(requests.organizationId, ctx.organizationId),
        ne(requests.id, r.id),
        gte(requests.createdAt, since),
        sql`(${requests.createdAt}, ${requests.id}) < (${r.createdAt}, ${r.id})`,
        or(...same),
      ),
    )
    .orderBy(desc(requests.createdAt), desc(requests.id))
    .limit(1);
  return row?.id ?? null;
}

async function detail(ctx: Ctx, r: RequestRow) {
  const matched = await customerByContact(ctx, r.email, r.phone);
  return { ...requestView(r), duplicateOf: await duplicateOf(ctx, r), matchedCustomerId: matched?.id ?? null };
}

export type RequestDetailView = Awaited<ReturnType<typeof detail>>;

export async function getRequest(ctx: Ctx, id: string) {
  return detail(ctx, await rowOf(ctx, id));
}

async function move(ctx: Ctx, id: string, action: RequestAction, extra: (at: Date) => Partial<RequestRow>) {
  const before = await rowOf(ctx, id, true);
  const status = take(requestMachine, before.status as RequestStatus, action);
  const at = new Date();
  const [row] = await ctx.tx
    .update(requests)
    .set({ ...extra(at), status, updatedAt: at })
    .where(mine(ctx, id))
    .returning();
  return row as RequestRow;
}

export async function declineRequest(ctx: Ctx, id: string, reason: string | undefined) {
  const row = await move(ctx, id, 'decline', (at) => ({ declinedAt: at, declineReason: blank(reason) }));
  const view = requestView(row);
  await emit(ctx, 'request.declined', { requestId: view.id, request: view });
  return detail(ctx, row);
}

export async function archiveRequest(ctx: Ctx, id: string) {
  return detail(ctx, await move(ctx, id, 'archive', (at) => ({ archivedAt: at })));
}

/**
 * The request to convert, locked for the rest of the transaction, with the customer it matches:
 * 409 INVALID_STATE unless it is new (so converting twice is refused, even concurrently).
 */
export async function requestToConvert(ctx: Ctx, id: string) {
  const row = await rowOf(ctx, id, true);
  take(requestMachine, row.status as RequestStatus, 'convert');
  const matched = await customerByContact(ctx, row.email, row.phone);
  return { request: requestView(row), matchedCustomerId: matched?.id ?? null };
}

/** The conversion's last step: the request records what it became and request.converted is emitted. */
export async function markRequestConverted(
  ctx: Ctx,
  id: string,
  made: { customerId: string; estimateId?: string | undefined; jobId?: string | undefined },
) {
  const row = await move(ctx, id, 'convert', (at) => ({
    convertedAt: at,
    customerId: made.customerId,
    estimateId: made.estimateId ?? null,
    jobId: made.jobId ?? null,
  }));
  const view = requestView(row);
  await emit(ctx, 'request.converted', {
    requestId: view.id,
    customerId: made.customerId,
    estimateId: made.estimateId ?? null,
    jobId: made.jobId ?? null,
    request: view,
  });
  return detail(ctx, row);
}
