import { estimateLineItems, estimates } from '../../db/schema/index.js';
import { withCalendarDates } from '../../platform/calendar-date.js';
import { addDays, today } from '../../platform/dates.js';
import { AppError, invalidField, invalidState } from '../../platform/errors.js';
import { emit } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import { formatMoney } from '../../platform/money.js';
import type { Page } from '../../platform/pagination.js';
import type { PdfSource } from '../../platform/pdf.js';
import { canTake, take, withArticle } from '../../platform/state-machine.js';
import type { Ctx } from '../../platform/tenancy.js';
import {
  type DocumentInput,
  type DocumentPatch,
  documentFilters,
  documentLines,
  documentPage,
  documentRows,
  editParties,
  emitMove,
  insertDraft,
  refuseLockedFields,
  sendDocumentLink,
  startDocument,
  totalsView,
  writeEdit,
} from '../billing/documents.js';
import { nextDocumentNumber } from '../billing/numbering.js';
import type { SendDeps } from '../invoices/invoices.service.js';
import { type LastEmail, lastEmailOf } from '../mail/mail.service.js';
import { mailOwners } from '../mail/owner-notices.js';
import { recordPortalView } from '../portal-links/portal-links.service.js';
import { releaseEstimate } from '../requests/requests.refs.js';
import { getOrgSettings, orgTimezone } from '../settings/settings.service.js';
import { estimatePdfSource } from './estimates.pdf.js';
import {
  ESTIMATE_TRIGGER_EVENTS,
  type EstimateStatus,
  type EstimateTrigger,
  estimateMachine,
  LIMITED_EDIT_FIELDS,
  LIMITED_EDIT_STATES,
} from './estimates.transitions.js';

type EstimateRow = typeof estimates.$inferSelect;
type LineRow = typeof estimateLineItems.$inferSelect;

/** Default validity of an estimate (decisions §4). */
export const ESTIMATE_VALID_DAYS = 30;

function estimateView(r: EstimateRow, lines: LineRow[], lastEmail: LastEmail | null) {
  return {
    id: r.id,
    estimateNumber: r.estimateNumber,
    customerId: r.customerId,
    propertyId: r.propertyId,
    status: r.status as EstimateStatus,
    ...totalsView(r, lines),
    estimateDate: r.estimateDate,
    expirationDate: r.expirationDate,
    notes: r.notes,
    invoiceId: r.invoiceId,
    jobId: r.jobId,
    sentAt: r.sentAt,
    viewedAt: r.viewedAt,
    approvedAt: r.approvedAt,
    declinedAt: r.declinedAt,
    lastEmail,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}
export type EstimateView = ReturnType<typeof estimateView>;

const estimateLines = documentLines(estimateLineItems, 'estimateId');

async function viewOf(ctx: Ctx, row: EstimateRow): Promise<EstimateView> {
  const lines = await estimateLines.stored(ctx, row.id);
  return estimateView(row, lines, await lastEmailOf(ctx, 'estimate', row.id));
}

const estimateRows = documentRows(estimates, estimateMachine);
const findRow = (ctx: Ctx, id: string, lock: boolean): Promise<EstimateRow> => estimateRows.find(ctx, id, lock);

const eventData = (v: EstimateView) => ({ estimateId: v.id, estimateNumber: v.estimateNumber, estimate: v });

async function emitEstimateTransition(ctx: Ctx, trigger: EstimateTrigger, oldStatus: string, view: EstimateView) {
  const { specific, statusChanged } = ESTIMATE_TRIGGER_EVENTS[trigger];
  const events = { specific, statusChanged: statusChanged ? ('estimate.status_changed' as const) : null };
  await emitMove(ctx, events, oldStatus, view.status, eventData(view));
}

/** Moves an estimate by `trigger` (409 if the table refuses), stamps `extra`, emits. */
async function transition(
  ctx: Ctx,
  id: string,
  trigger: EstimateTrigger,
  extraOf: Partial<EstimateRow> | ((before: EstimateRow) => Partial<EstimateRow>) = {},
) {
  const { before, row } = await estimateRows.move(ctx, id, trigger, extraOf);
  const view = await viewOf(ctx, row);
  await emitEstimateTransition(ctx, trigger, before.status, view);
  return { view, before };
}

export async function estimatePdf(ctx: Ctx, id: string): Promise<PdfSource> {
  return estimatePdfSource(ctx, await getEstimate(ctx, id));
}

export async function getEstimate(ctx: Ctx, id: string): Promise<EstimateView> {
  return viewOf(ctx, await findRow(ctx, id, false));
}

export async function listEstimates(
  ctx: Ctx,
  q: { status?: string | undefined; customerId?: string | undefined },
  page: Page,
) {
  const where = documentFilters(ctx, estimates, q);
  return documentPage(ctx, { table: estimates, lines: estimateLines, type: 'estimate' }, where, page, estimateView);
}

const checkExpiration = (estimateDate: string, expirationDate: string) => {
  if (expirationDate < estimateDate) {
    throw invalidField('expirationDate', `must not be before estimateDate (${estimateDate})`);
  }
};

export interface CreateEstimateInput extends DocumentInput {
  estimateDate?: string | undefined;
  expirationDate?: string | undefined;
}

export async function createEstimate(ctx: Ctx, body: CreateEstimateInput): Promise<EstimateView> {
  const input = await withCalendarDates(body, ['estimateDate', 'expirationDate'], () => orgTimezone(ctx));
  const { settings, customer, priced } = await startDocument(ctx, input);
  const estimateDate = input.estimateDate ?? today(settings.timezone);
  const expirationDate = input.expirationDate ?? addDays(estimateDate, ESTIMATE_VALID_DAYS);
  checkExpiration(estimateDate, expirationDate);

  const row = await insertDraft<EstimateRow>(
    ctx,
    estimates,
    estimateLines,
    {
      id: newId('est'),
      estimateNumber: await nextDocumentNumber(ctx, 'estimate'),
      customerId: customer.id,
      propertyId: input.propertyId ?? null,
      estimateDate,
      expirationDate,
      notes: input.notes ?? null,
    },
    priced,
  );
  const view = await viewOf(ctx, row);
  await emit(ctx, 'estimate.created', eventData(view));
  return view;
}

export interface UpdateEstimateInput extends DocumentPatch {
  estimateDate?: string | undefined;
  expirationDate?: string | undefined;
}

export async function updateEstimate(ctx: Ctx, id: string, body: UpdateEstimateInput): Promise<EstimateView> {
  const patch = await withCalendarDates(body, ['estimateDate', 'expirationDate'], () => orgTimezone(ctx));
  const row = await findRow(ctx, id, true);
  const status = row.status as EstimateStatus;
  if (status !== 'draft') {
    if (!LIMITED_EDIT_STATES.includes(status))
      throw invalidState(`${withArticle(`${status} estimate`, true)} cannot be changed`);
    refuseLockedFields('estimate', status, patch, LIMITED_EDIT_FIELDS);
  }
  const parties = await editParties(ctx, row, patch, estimateLines);
  const estimateDate = patch.estimateDate ?? row.estimateDate;
  const expirationDate = patch.expirationDate ?? row.expirationDate;
  checkExpiration(estimateDate, expirationDate);
  const columns = { estimateDate, expirationDate };
  return viewOf(ctx, await writeEdit<EstimateRow>(ctx, estimates, estimateLines, row, patch, parties, columns));
}

export async function deleteEstimate(ctx: Ctx, id: string): Promise<void> {
  // A request converted to this draft lets go of it first (its foreign key is NO ACTION).
  await releaseEstimate(ctx, id);
  await estimateRows.deleteDraft(ctx, id);
}

export async function sendEstimate(ctx: Ctx, id: string, deps: SendDeps, opts: { email?: boolean } = {}) {
  const { view } = await transition(ctx, id, 'send', (before) => ({
    // sentAt is the first send (a resend keeps it): the dashboard counts estimates first sent in a range.
    sentAt: before.sentAt ?? new Date(),
  }));
  return sendDocumentLink(
    ctx,
    'estimate',
    view,
    deps,
    ({ settings, from, url }) => ({
      subject: `Estimate ${view.estimateNumber} from ${from}`,
      lines: [
        `Estimate ${view.estimateNumber} for ${view.total.toFixed(2)} ${settings.currency} is valid until ${view.expirationDate}.`,
        '',
        `View, approve or decline it online: ${url}`,
        '',
        `— ${from}`,
      ],
    }),
    opts,
  );
}

export const approveEstimate = async (ctx: Ctx, id: string) =>
  (await transition(ctx, id, 'approve', { approvedAt: new Date() })).view;
export const declineEstimate = async (ctx: Ctx, id: string) =>
  (await transition(ctx, id, 'decline', { declinedAt: new Date() })).view;

/**
 * Converting into an invoice (src/flows/convert-estimate.ts), first step: the estimate,
 * locked, that may still be converted (not made into a job, the machine allows `convert`),
 * with its stored lines.
 */
export async function convertibleEstimate(ctx: Ctx, id: string) {
  const row = await findRow(ctx, id, true);
  if (row.jobId) throw jobAlready(row);
  take(estimateMachine, row.status as EstimateStatus, 'convert');
  return { row, lines: await estimateLines.stored(ctx, id) };
}

/** Converting into an invoice, last step: the estimate records the invoice and becomes converted. */
export async function markConverted(ctx: Ctx, id: string, invoiceId: string): Promise<EstimateView> {
  return (await transition(ctx, id, 'convert', { invoiceId })).view;
}

const jobAlready = (row: EstimateRow) =>
  new AppError('CONFLICT', `Estimate ${row.estimateNumber} was already converted to job ${row.jobId}; bill the job`);

/*
 * An approved estimate becomes a job (operations.md §9): the flow
 * flows/convert-estimate-to-job.ts locks and checks the estimate here, has the jobs
 * module make the job, and records it here. The estimate stays approved.
 */

/**
 * The estimate a job is about to be made from, locked (a racing conversion waits and
 * then sees jobId): its row and its lines at their approved prices. Already converted
 * to a job → 409 CONFLICT; not approved → 409 INVALID_STATE from the state machine.
 */
export async function estimateForJob(ctx: Ctx, id: string) {
  const row = await findRow(ctx, id, true);
  if (row.jobId) throw jobAlready(row);
  take(estimateMachine, row.status as EstimateStatus, 'convert_to_job');
  return { estimate: row, lines: await estimateLines.stored(ctx, id) };
}

/** Records the job made from the estimate (locked by estimateForJob in this transaction). */
export async function recordEstimateJob(ctx: Ctx, id: string, jobId: string): Promise<EstimateView> {
  const { row } = await estimateRows.move(ctx, id, 'convert_to_job', { jobId });
  return viewOf(ctx, row);
}

/**
 * The customer opens the link: records it, and a view the table takes (the first one,
 * of a sent estimate) makes it viewed (no event). Opening the link is never refused:
 * in any other state it only shows the estimate.
 */
export async function viewEstimateInPortal(ctx: Ctx, id: string): Promise<EstimateView> {
  await recordPortalView(ctx);
  const row = await findRow(ctx, id, true);
  if (canTake(estimateMachine, row.status as EstimateStatus, 'view')) {
    return (await transition(ctx, id, 'view', { viewedAt: new Date() })).view;
  }
  return viewOf(ctx, row);
}

/**
 * The customer approves or declines through the link. Past its expirationDate an
 * estimate cannot be accepted even if the expiry sweep has not run yet.
 */
export async function respondInPortal(ctx: Ctx, id: string, trigger: 'approve' | 'decline'): Promise<EstimateView> {
  const row = await findRow(ctx, id, true);
  const { timezone } = await getOrgSettings(ctx);
  // Past its date, an estimate the expiry sweep would take is refused as if it had run.
  if (canTake(estimateMachine, row.status as EstimateStatus, 'expire') && row.expirationDate < today(timezone)) {
    throw invalidState(`This estimate expired on ${row.expirationDate}`);
  }
  if (trigger === 'decline') return declineEstimate(ctx, id);
  const approved = await approveEstimate(ctx, id);
  const { currency } = await getOrgSettings(ctx);
  const total = formatMoney(approved.total, currency);
  // The office hears of it at once (setting notifyOwners), in the approval's own transaction.
  await mailOwners(ctx, {
    documentId: id,
    subject: `Estimate ${approved.estimateNumber} approved (${total})`,
    lines: [
      `The customer approved estimate ${approved.estimateNumber} for ${total} through their link.`,
      'Convert it to a job or an invoice when you are ready: POST /api/estimates/' +
        id +
        '/convert-to-job or /convert.',
    ],
  });
  return approved;
}

/** The expiry sweep for one organization: sent/viewed estimates past expirationDate. No event (spec 3.2). */
export const expireEstimates = (ctx: Ctx, todayDate: string, limit: number): Promise<number> =>
  estimateRows.sweep(ctx, 'expire', 'expirationDate', todayDate, limit);
