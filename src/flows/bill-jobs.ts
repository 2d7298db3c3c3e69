import { finish, storedToPriced, taxRateFor } from '../modules/billing/line-items.js';
import { type CustomerRow, requireCustomers } from '../modules/customers/customers.refs.js';
import {
  type InvoiceDetailView,
  insertInvoices,
  type SendDeps,
  sendInvoice,
} from '../modules/invoices/invoices.service.js';
import {
  type BillableJob,
  lockJobsToBill,
  lockUnbilledJobs,
  markJobsBilled,
  type UnbilledQuery,
} from '../modules/jobs/jobs.billing.js';
import { getOrgSettings, type OrgSettings } from '../modules/settings/settings.service.js';
import { addDays, startOfDayIn, today } from '../platform/dates.js';
import { invalidField } from '../platform/errors.js';
import type { Ctx } from '../platform/tenancy.js';

/*
 * From work to cash (operations.md §9, "Billing the work"): completed, priced jobs
 * become invoices. This file is the one place where the cross-module operation is
 * written, as a list of steps; the jobs module locks, checks and marks its own rows
 * (jobs.billing.ts), the invoice service numbers, prices, stores, posts and announces
 * each invoice exactly as it does any invoice. Everything runs in the caller's
 * transaction: a refusal at any step leaves no invoice and no job marked.
 */

export interface BillOptions {
  /**
   * Send each invoice at once (ledger posting, invoice.sent, the mail), as POST /send
   * does; or decide per invoice from the jobs it bills (a schedule's autoSend).
   */
  send?: boolean | ((jobs: BillableJob[]) => boolean) | undefined;
}

/** An invoice line made from a job line: `2026-11-03 — Weekly mowing` (ISO date, em dash, description). */
export const jobLineDescription = (date: string, description: string) => `${date} — ${description}`;

interface Draft {
  customer: CustomerRow;
  jobs: BillableJob[];
}

/** What a caller of billJobs has already read: the settings, and customers it has checked. */
export interface Known {
  settings?: OrgSettings | undefined;
  customers?: ReadonlyMap<string, CustomerRow> | undefined;
}

/**
 * Bills already locked and checked jobs, one draft invoice per customer:
 *  1. settings (unless `known` has them): today, terms, tax rate;
 *  2. group the jobs by customer (customers in first-job order, jobs by date then id);
 *  3. customers: check those not in `known`, and price each group's lines at its tax rate, before the first write;
 *  4. invoices: create them in one batch (numbers, totals, lines, invoice.created: insertInvoices);
 *  5. jobs: mark them billed (409 if a concurrent bill got one first);
 *  6. invoices: send each when asked (ledger posting, events, mail: sendInvoice), handed the
 *     settings and customers read above, so a send reads neither again.
 */
export async function billJobs(
  ctx: Ctx,
  jobs: BillableJob[],
  opts: BillOptions,
  deps: SendDeps,
  known: Known = {},
): Promise<InvoiceDetailView[]> {
  const settings = known.settings ?? (await getOrgSettings(ctx));
  const invoiceDate = today(settings.timezone);

  const groups = new Map<string, BillableJob[]>();
  for (const job of jobs) groups.set(job.customerId, [...(groups.get(job.customerId) ?? []), job]);
  const unchecked = [...groups.keys()].filter((id) => !known.customers?.has(id));
  const customers = new Map([...(known.customers ?? []), ...(await requireCustomers(ctx, unchecked, 'jobIds'))]);
  const drafts: Draft[] = [];
  for (const [customerId, group] of groups) {
    const customer = customers.get(customerId) as CustomerRow;
    group.sort((a, b) => a.scheduledDate.localeCompare(b.scheduledDate) || a.id.localeCompare(b.id));
    drafts.push({ customer, jobs: group });
  }
  const priced = drafts.map((d) =>
    finish(
      d.jobs.flatMap((job) =>
        job.lineItems.map((l) => ({
          ...storedToPriced(l),
          description: jobLineDescription(job.scheduledDate, l.description),
        })),
      ),
      taxRateFor(d.customer, settings.taxRate),
    ),
  );

  const made = await insertInvoices(
    ctx,
    drafts.map((d, i) => {
      const properties = new Set(d.jobs.map((j) => j.propertyId));
      const [onlyProperty] = properties;
      return {
        customerId: d.customer.id,
        propertyId: properties.size === 1 ? (onlyProperty ?? null) : null,
        invoiceDate,
        dueDate: addDays(invoiceDate, settings.paymentTermsDays),
        notes: null,
        estimateId: null,
        priced: priced[i] as ReturnType<typeof finish>,
      };
    }),
  );
  await markJobsBilled(
    ctx,
    drafts.map((d, i) => ({ jobIds: d.jobs.map((j) => j.id), invoice: made[i] as InvoiceDetailView })),
  );
  const { send } = opts;
  if (!send) return made;
  const billed: InvoiceDetailView[] = [];
  for (const [i, invoice] of made.entries()) {
    if (send !== true && !send((drafts[i] as Draft).jobs)) {
      billed.push(invoice);
      continue;
    }
    // The invoice as sent: status, sentAt and its mail, without the send's own link fields.
    const {
      portalUrl: _link,
      emailedTo: _to,
      ...sent
    } = await sendInvoice(ctx, invoice.id, {
      ...deps,
      settings,
      customers,
    });
    billed.push(sent);
  }
  return billed;
}

/** POST /api/invoices/from-jobs: exactly these jobs (all billable, else nothing is written). */
export async function invoicesFromJobs(ctx: Ctx, jobIds: string[], opts: BillOptions, deps: SendDeps) {
  const jobs = await lockJobsToBill(ctx, jobIds);
  return billJobs(ctx, jobs, opts, deps);
}

export interface BatchInput extends BillOptions {
  /** First completion date, YYYY-MM-DD, in the organization's timezone. */
  from: string;
  /** Last completion date, inclusive. */
  to: string;
  customerIds?: string[] | undefined;
}

/**
 * POST /api/invoices/batch: every completed, unbilled, priced job completed from..to
 * (calendar dates in the organization's timezone), one invoice per customer.
 * `where` narrows the jobs further (a schedule's visits, for the monthly worker).
 */
export async function batchInvoices(
  ctx: Ctx,
  input: BatchInput,
  deps: SendDeps,
  where?: UnbilledQuery['where'],
): Promise<InvoiceDetailView[]> {
  if (input.from > input.to) throw invalidField('from', `must not be after to (${input.to})`);
  const customers = await requireCustomers(ctx, input.customerIds ?? [], 'customerIds');
  const settings = await getOrgSettings(ctx);
  const jobs = await lockUnbilledJobs(ctx, {
    from: startOfDayIn(input.from, settings.timezone),
    to: startOfDayIn(addDays(input.to, 1), settings.timezone),
    customerIds: input.customerIds,
    where,
  });
  return billJobs(ctx, jobs, input, deps, { settings, customers });
}

/**
 * A schedule's `per_visit` billing: the completed visit's own invoice, sent when
 * `autoSend`. Made once: the job is locked, and a visit already billed (a second
 * call, another process) answers null instead of a second invoice.
 */
export async function billCompletedVisit(
  ctx: Ctx,
  jobId: string,
  opts: { autoSend?: boolean | undefined },
  deps: SendDeps,
): Promise<InvoiceDetailView | null> {
  const [job] = await lockUnbilledJobsById(ctx, jobId);
  if (!job) return null;
  const [invoice] = await billJobs(ctx, [job], { send: opts.autoSend }, deps);
  return invoice ?? null;
}

/** The job if it is still billable; [] when it was billed meanwhile, is not completed or has no lines. */
async function lockUnbilledJobsById(ctx: Ctx, jobId: string): Promise<BillableJob[]> {
  try {
    return await lockJobsToBill(ctx, [jobId]);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'CONFLICT' || code === 'INVALID_STATE') return [];
    throw err;
  }
}

/** The calendar month before the one `todayDate` falls in: `{from, to}`, both inclusive. */
export function previousMonth(todayDate: string): { from: string; to: string } {
  const [y, m] = todayDate.split('-').map(Number) as [number, number];
  const first = `${y}-${String(m).padStart(2, '0')}-01`;
  const to = addDays(first, -1);
  return { from: `${to.slice(0, 7)}-01`, to };
}

/**
 * A schedule's `batch` billing, run by the worker on the first day of each month: per
 * customer, the completed unbilled visits of the previous month in one invoice.
 * Running it twice (or on two processes at once) bills each visit once: the second
 * run waits for the first's locks and then finds nothing unbilled.
 */
export const billPreviousMonth = (
  ctx: Ctx,
  todayDate: string,
  opts: BillOptions & { customerIds?: string[] | undefined },
  deps: SendDeps,
  where?: UnbilledQuery['where'],
) => batchInvoices(ctx, { ...previousMonth(todayDate), ...opts }, deps, where);
