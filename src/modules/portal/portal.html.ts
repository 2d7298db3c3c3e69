import { escapeHtml, type Html, html } from '../../platform/html.js';
import { formatMoney } from '../../platform/money.js';
import type { PortalCompany, PortalPageModel, PortalVisit } from './portal.page.js';

/*
 * The customer page, rendered on the server: the document is readable without
 * JavaScript; portal.js adds the actions (pay, approve/decline, sign). Every value
 * goes through `html`, which escapes it, so customer and company text cannot inject
 * markup. Dates are the organization's: calendar dates as they are, timestamps in
 * its timezone; amounts are formatted from cents in its currency.
 */

type Doc = Record<string, unknown>;
const str = (d: Doc, k: string) => (typeof d[k] === 'string' ? (d[k] as string) : null);
const num = (d: Doc, k: string) => (typeof d[k] === 'number' ? (d[k] as number) : 0);
/** A timestamp field: the REST views give ISO strings, some portal views Dates. */
const when = (d: Doc, k: string) => {
  const v = d[k];
  if (v instanceof Date) return v.toISOString();
  return typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? v : null;
};
const list = (d: Doc, k: string) => (Array.isArray(d[k]) ? (d[k] as Doc[]) : []);

/** A calendar date (YYYY-MM-DD) as written, never shifted by a timezone. */
export function formatDate(date: string): string {
  return new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeZone: 'UTC' }).format(
    new Date(`${date}T00:00:00Z`),
  );
}
/** A visit's calendar date with its weekday (Tue, Dec 1, 2026), never shifted by a timezone. */
export function formatVisitDate(date: string): string {
  return new Intl.DateTimeFormat('en-US', {
    weekday: 'short',
    month: 'short',
    day: 'numeric',
    year: 'numeric',
    timeZone: 'UTC',
  }).format(new Date(`${date}T00:00:00Z`));
}
/** A moment, in the organization's timezone, with the zone named. */
export function formatMoment(iso: string, timezone: string): string {
  return new Intl.DateTimeFormat('en-US', {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
    timeZone: timezone,
    timeZoneName: 'short',
  }).format(new Date(iso));
}

type Tone = 'ok' | 'warn' | 'bad' | 'info' | 'muted';
const badge = (label: string, tone: Tone) => html`<span class="badge badge-${tone}">${label}</span>`;

const INVOICE_STATUS: Record<string, [string, Tone]> = {
  sent: ['Open', 'info'],
  partially_paid: ['Partially paid', 'info'],
  overdue: ['Overdue', 'bad'],
  paid: ['Paid', 'ok'],
  void: ['Void', 'muted'],
  written_off: ['Closed', 'muted'],
  draft: ['Draft', 'muted'],
};
const ESTIMATE_STATUS: Record<string, [string, Tone]> = {
  sent: ['Awaiting your approval', 'info'],
  viewed: ['Awaiting your approval', 'info'],
  approved: ['Approved', 'ok'],
  converted: ['Approved', 'ok'],
  declined: ['Declined', 'muted'],
  expired: ['Expired', 'muted'],
  draft: ['Draft', 'muted'],
};
const CONTRACT_STATUS: Record<string, [string, Tone]> = {
  sent: ['Awaiting your signature', 'info'],
  signed: ['Signed', 'ok'],
  active: ['Active', 'ok'],
  expired: ['Expired', 'muted'],
  canceled: ['Canceled', 'muted'],
  draft: ['Draft', 'muted'],
};
function statusBadge(map: Record<string, [string, Tone]>, status: string) {
  const [label, tone] = map[status] ?? [status, 'muted'];
  return badge(label, tone);
}

function companyCard(c: PortalCompany) {
  return html`<section class="card company" aria-labelledby="company-heading">
    <h2 id="company-heading">${c.name}</h2>
    ${c.address ? html`<p class="address">${c.address}</p>` : null}
    <ul class="contact">
      ${c.phone ? html`<li><a href="${`tel:${c.phone.replace(/[^+\d]/g, '')}`}">${c.phone}</a></li>` : null}
      ${c.email ? html`<li><a href="${`mailto:${c.email}`}">${c.email}</a></li>` : null}
    </ul>
  </section>`;
}

/**
 * A line billed from a visit starts with the visit's ISO date (`2026-11-28 — Weekly mowing`,
 * flows/bill-jobs.ts); the page writes that date as it writes every other date.
 */
export function lineText(description: string): string {
  const m = /^(\d{4}-\d{2}-\d{2}) — /.exec(description);
  return m ? `${formatDate(m[1] as string)} — ${description.slice(m[0].length)}` : description;
}

function lineTable(lines: Doc[], currency: string, caption: string) {
  return html`<table class="lines">
    <caption class="visually-hidden">${caption}</caption>
    <thead><tr><th scope="col">Description</th><th scope="col" class="num">Qty</th><th scope="col" class="num">Unit price</th><th scope="col" class="num">Amount</th></tr></thead>
    <tbody>${lines.map(
      (l) => html`<tr><td>${lineText(str(l, 'description') ?? '')}</td><td class="num">${num(l, 'quantity')}</td>
        <td class="num">${formatMoney(num(l, 'unitPrice'), currency)}</td><td class="num">${formatMoney(num(l, 'amount'), currency)}</td></tr>`,
    )}</tbody>
  </table>`;
}

function totals(rows: Array<[string, string, boolean?]>) {
  return html`<dl class="totals">${rows.map(
    ([k, v, strong]) =>
      html`<div class="${strong ? 'total-row strong' : 'total-row'}"><dt>${k}</dt><dd>${v}</dd></div>`,
  )}</dl>`;
}

function facts(rows: Array<[string, string | null]>) {
  return html`<dl class="facts">${rows
    .filter(([, v]) => v !== null)
    .map(([k, v]) => html`<div><dt>${k}</dt><dd>${v}</dd></div>`)}</dl>`;
}

const pdfLink = (token: string, filename: string) =>
  html`<a class="button secondary" href="${`/api/portal/${token}/pdf`}" download="${filename}">Download PDF</a>`;

/** What the customer can do with an invoice: pay by card, or why not. */
function invoiceActions(m: Extract<PortalPageModel, { kind: 'document' }>, d: Doc) {
  const status = str(d, 'status') ?? '';
  const c = m.company.currency;
  const balance = num(d, 'balance');
  if (status === 'paid') {
    const payments = list(d, 'payments');
    const last = payments[payments.length - 1];
    return html`<p class="state state-ok" role="status">Paid${last ? html` on ${formatDate(str(last, 'paymentDate') ?? '')}` : null}. Thank you!</p>`;
  }
  if (status === 'void')
    return html`<p class="state">This invoice was voided by ${m.company.name}: nothing is due.</p>`;
  if (status === 'written_off') return html`<p class="state">This invoice is closed: nothing is due.</p>`;
  if (balance <= 0 || status === 'draft') return null;
  if (!m.stripePublishableKey) {
    return html`<p class="state" id="card-unavailable">Online card payment is not available for this invoice. To pay, contact ${m.company.name}${m.company.phone ? html` at ${m.company.phone}` : null}${m.company.email ? html` or ${m.company.email}` : null}.</p>`;
  }
  return html`<div class="pay">
    <button type="button" class="button primary" id="pay-start">Pay ${formatMoney(balance, c)} by card</button>
    <form id="payment-form" class="payment-form" hidden>
      <div id="payment-element" class="payment-element"></div>
      <button type="submit" class="button primary" id="pay-submit">Pay ${formatMoney(balance, c)}</button>
    </form>
    <p class="secure muted small">Card details go straight to Stripe; ${m.company.name} never sees your card number.</p>
  </div>`;
}

const METHOD: Record<string, string> = {
  card: 'Card',
  cash: 'Cash',
  check: 'Check',
  ach: 'Bank transfer',
  other: 'Other',
};

function invoiceBody(m: Extract<PortalPageModel, { kind: 'document' }>, d: Doc) {
  const c = m.company.currency;
  const number = str(d, 'invoiceNumber') ?? '';
  const status = str(d, 'status') ?? '';
  const due = str(d, 'dueDate');
  const open = ['sent', 'partially_paid', 'overdue'].includes(status);
  const dueLine =
    due && open
      ? due < m.today
        ? html`<p class="due due-late">Overdue since ${formatDate(due)}</p>`
        : html`<p class="due">Due ${formatDate(due)}</p>`
      : null;
  const payments = list(d, 'payments');
  return {
    title: `Invoice ${number} from ${m.company.name}`,
    summary: html`<p class="eyebrow">Invoice ${number}</p>
      <p class="amount"><span class="visually-hidden">${open ? 'Amount due: ' : 'Total: '}</span>${formatMoney(open ? num(d, 'balance') : num(d, 'total'), c)}</p>
      ${dueLine}
      <p>${statusBadge(INVOICE_STATUS, status)}</p>
      ${invoiceActions(m, d)}
      <div class="links">${pdfLink(m.token, `${number}.pdf`)}</div>`,
    details: html`<h2 id="details-heading">Invoice details</h2>
      ${facts([
        ['Billed to', m.customerName],
        ['Service address', m.serviceAddress],
        ['Invoice number', number],
        ['Invoice date', str(d, 'invoiceDate') && formatDate(str(d, 'invoiceDate') as string)],
        ['Due date', due && formatDate(due)],
      ])}
      ${lineTable(list(d, 'lineItems'), c, `Lines of invoice ${number}`)}
      ${totals([
        ['Subtotal', formatMoney(num(d, 'subtotal'), c)],
        [`Tax (${num(d, 'taxRate')} %)`, formatMoney(num(d, 'tax'), c)],
        ['Total', formatMoney(num(d, 'total'), c), true],
        ...(num(d, 'amountPaid') > 0
          ? [['Paid', `− ${formatMoney(num(d, 'amountPaid'), c)}`] as [string, string]]
          : []),
        ['Balance due', formatMoney(num(d, 'balance'), c), true],
      ])}
      ${
        payments.length
          ? html`<h3>Payments</h3><ul class="payments">${payments.map(
              (p) =>
                html`<li><span>${formatDate(str(p, 'paymentDate') ?? '')} · ${METHOD[str(p, 'method') ?? ''] ?? str(p, 'method')}</span><span>${formatMoney(num(p, 'amount'), c)}</span></li>`,
            )}</ul>`
          : null
      }
      ${str(d, 'notes') ? html`<h3>Notes</h3><p class="notes">${str(d, 'notes')}</p>` : null}`,
  };
}

function estimateBody(m: Extract<PortalPageModel, { kind: 'document' }>, d: Doc) {
  const c = m.company.currency;
  const number = str(d, 'estimateNumber') ?? '';
  const status = str(d, 'status') ?? '';
  const expires = str(d, 'expirationDate');
  const pastExpiry = expires !== null && expires < m.today;
  const tz = m.company.timezone;
  let actions: Html | null = null;
  if ((status === 'sent' || status === 'viewed') && !pastExpiry) {
    actions = html`<div class="actions">
      <button type="button" class="button primary" data-action="approve">Approve estimate</button>
      <button type="button" class="button secondary" data-action="decline">Decline</button>
    </div>`;
  } else if (status === 'approved' || status === 'converted') {
    actions = html`<p class="state state-ok" role="status">You approved this estimate${when(d, 'approvedAt') ? html` on ${formatMoment(when(d, 'approvedAt') as string, tz)}` : null}. ${m.company.name} will be in touch.</p>`;
  } else if (status === 'declined') {
    actions = html`<p class="state" role="status">You declined this estimate${when(d, 'declinedAt') ? html` on ${formatMoment(when(d, 'declinedAt') as string, tz)}` : null}.</p>`;
  } else if (status === 'expired' || pastExpiry) {
    actions = html`<p class="state">This estimate expired${expires ? html` on ${formatDate(expires)}` : null}. Ask ${m.company.name} for a new one.</p>`;
  }
  return {
    title: `Estimate ${number} from ${m.company.name}`,
    summary: html`<p class="eyebrow">Estimate ${number}</p>
      <p class="amount"><span class="visually-hidden">Total: </span>${formatMoney(num(d, 'total'), c)}</p>
      ${expires && !pastExpiry ? html`<p class="due">Valid until ${formatDate(expires)}</p>` : null}
      <p>${statusBadge(ESTIMATE_STATUS, pastExpiry && (status === 'sent' || status === 'viewed') ? 'expired' : status)}</p>
      ${actions}
      <div class="links">${pdfLink(m.token, `${number}.pdf`)}</div>`,
    details: html`<h2 id="details-heading">Estimate details</h2>
      ${facts([
        ['Prepared for', m.customerName],
        ['Service address', m.serviceAddress],
        ['Estimate number', number],
        ['Estimate date', str(d, 'estimateDate') && formatDate(str(d, 'estimateDate') as string)],
        ['Valid until', expires && formatDate(expires)],
      ])}
      ${lineTable(list(d, 'lineItems'), c, `Lines of estimate ${number}`)}
      ${totals([
        ['Subtotal', formatMoney(num(d, 'subtotal'), c)],
        [`Tax (${num(d, 'taxRate')} %)`, formatMoney(num(d, 'tax'), c)],
        ['Total', formatMoney(num(d, 'total'), c), true],
      ])}
      ${str(d, 'notes') ? html`<h3>Notes</h3><p class="notes">${str(d, 'notes')}</p>` : null}`,
  };
}

function contractBody(m: Extract<PortalPageModel, { kind: 'document' }>, d: Doc) {
  const c = m.company.currency;
  const title = str(d, 'title') ?? 'Contract';
  const status = str(d, 'status') ?? '';
  const sig = d.signature && typeof d.signature === 'object' ? (d.signature as Doc) : null;
  const start = str(d, 'startDate');
  const end = str(d, 'endDate');
  let actions: Html | null = null;
  if (sig) {
    const signedAt = when(sig, 'signedAt');
    actions = html`<p class="state state-ok" role="status">Signed by ${str(sig, 'signerName')}${signedAt ? html` on ${formatMoment(signedAt, m.company.timezone)}` : null}.</p>`;
  } else if (status === 'sent') {
    actions = html`<form id="sign-form" class="sign-form">
      <label for="signer-name">Your full name</label>
      <input id="signer-name" name="signerName" autocomplete="name" required maxlength="200">
      <label class="check"><input type="checkbox" id="sign-agree" required> I have read this contract and agree to its terms</label>
      <button type="submit" class="button primary">Sign contract</button>
    </form>`;
  } else if (status === 'canceled' || status === 'expired') {
    actions = html`<p class="state">This contract is ${status === 'canceled' ? 'canceled' : 'expired'}: nothing to sign.</p>`;
  }
  return {
    title: `${title}: contract from ${m.company.name}`,
    summary: html`<p class="eyebrow">Contract</p>
      <p class="doc-title">${title}</p>
      <p class="amount small-amount"><span class="visually-hidden">Value: </span>${formatMoney(num(d, 'totalValue'), c)}</p>
      ${start || end ? html`<p class="due">${start ? formatDate(start) : '…'} – ${end ? formatDate(end) : 'open-ended'}</p>` : null}
      <p>${statusBadge(CONTRACT_STATUS, status)}</p>
      ${actions}`,
    details: html`<h2 id="details-heading">The contract</h2>
      ${facts([['Between', m.customerName ? `${m.company.name} and ${m.customerName}` : m.company.name]])}
      <div class="contract-text">${str(d, 'content')}</div>
      ${list(d, 'services').length ? lineTable(list(d, 'services'), c, `Services of ${title}`) : null}
      ${totals([['Total value', formatMoney(num(d, 'totalValue'), c), true]])}`,
  };
}

/** How many visits the page lists before it says how many more there are. */
const VISITS_SHOWN = 8;

const VISIT_STATUS: Record<string, [string, Tone]> = {
  in_progress: ['Under way', 'info'],
  on_hold: ['On hold', 'warn'],
};

/** A visit's time of day: its moment in the organization's timezone, else the local start time as entered. */
function visitTime(v: PortalVisit, timezone: string): string | null {
  const at = v.startsAt instanceof Date ? v.startsAt.toISOString() : v.startsAt;
  if (at) {
    return new Intl.DateTimeFormat('en-US', { hour: 'numeric', minute: '2-digit', timeZone: timezone }).format(
      new Date(at),
    );
  }
  return v.startTime;
}

/** The customer's visits still to come (the same list as GET /api/portal/{token}/visits), or nothing when there are none. */
function upcomingVisits(m: Extract<PortalPageModel, { kind: 'document' }>): Html | null {
  if (m.visits.length === 0) return null;
  const shown = m.visits.slice(0, VISITS_SHOWN);
  const more = m.visits.length - shown.length;
  return html`<section class="card visits" aria-labelledby="visits-heading">
    <h2 id="visits-heading">Upcoming visits</h2>
    <ul class="visit-list">${shown.map((v) => {
      const time = visitTime(v, m.company.timezone);
      const status = VISIT_STATUS[v.status];
      return html`<li class="visit"><span class="visit-when">${formatVisitDate(v.scheduledDate)}${time ? html` · ${time}` : null}</span>
        <span class="visit-what">${v.services.length ? v.services.join(', ') : 'Visit'}</span>${status ? badge(status[0], status[1]) : null}</li>`;
    })}</ul>
    ${more > 0 ? html`<p class="muted small">and ${more} more after ${formatDate((shown[shown.length - 1] as PortalVisit).scheduledDate)}.</p>` : null}
  </section>`;
}

export interface RenderedPage {
  status: number;
  html: string;
  /** The page takes card payments: its CSP admits Stripe.js. */
  stripe: boolean;
}

function layout(title: string, body: Html, assets: PortalAssets, stripe: boolean) {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/portal-assets/portal.css?v=${assets.css}">
${stripe ? '<script src="https://js.stripe.com/v3/" defer></script>\n' : ''}<script type="module" src="/portal-assets/portal.js?v=${assets.js}"></script>
</head>
<body>
${body.value}
</body>
</html>
`;
}

/** Cache-busting versions of the page's two files. */
export interface PortalAssets {
  css: string;
  js: string;
}

function messagePage(heading: string, text: Html, company: PortalCompany | null): Html {
  return html`<main class="page narrow" id="portal">
    ${company ? html`<header class="brand"><p class="brand-name">${company.name}</p></header>` : null}
    <section class="card message" aria-labelledby="message-heading">
      <h1 id="message-heading">${heading}</h1>
      <p>${text}</p>
    </section>
    ${company && (company.address || company.email || company.phone) ? companyCard(company) : null}
  </main>`;
}

export function renderPortalPage(m: PortalPageModel, assets: PortalAssets): RenderedPage {
  if (m.kind === 'missing') {
    const body = messagePage(
      'This link does not work',
      html`The link may be mistyped or replaced by a newer one. Open the latest email you received, or ask the company that sent it for a new link.`,
      null,
    );
    return { status: 404, html: layout('Link not found', body, assets, false), stripe: false };
  }
  if (m.kind === 'expired') {
    const contact = m.company.email ?? m.company.phone;
    const body = messagePage(
      'This link has expired',
      html`For your security, document links stop working after a while. Ask ${m.company.name}${contact ? html` (${contact})` : null} to send you a new one.`,
      m.company,
    );
    return { status: 410, html: layout('Link expired', body, assets, false), stripe: false };
  }
  const d = m.document;
  const view =
    m.type === 'invoice' ? invoiceBody(m, d) : m.type === 'estimate' ? estimateBody(m, d) : contractBody(m, d);
  const stripe = m.stripePublishableKey !== null && m.type === 'invoice';
  const body = html`<main class="page" id="portal" data-token="${m.token}" data-type="${m.type}"
      data-status="${str(d, 'status')}" data-balance="${m.type === 'invoice' ? num(d, 'balance') : ''}"
      ${stripe ? html`data-stripe-key="${m.stripePublishableKey}"` : null}>
    <header class="brand"><p class="brand-name">${m.company.name}</p></header>
    <h1 class="visually-hidden">${view.title}</h1>
    <div class="layout">
      <div class="side">
        <section class="card summary" aria-label="Summary">
          ${view.summary}
          <p id="portal-status" class="state" role="status" aria-live="polite" hidden></p>
          <p id="portal-error" class="state state-bad" role="alert" hidden></p>
        </section>
        ${companyCard(m.company)}
      </div>
      <section class="card details" aria-labelledby="details-heading">
        ${view.details}
      </section>
    </div>
    ${upcomingVisits(m)}
    <footer class="foot muted small">Questions about this ${m.type}? Contact ${m.company.name}${m.company.email ? html` at <a href="${`mailto:${m.company.email}`}">${m.company.email}</a>` : null}. Times are shown in ${m.company.timezone}.</footer>
  </main>
  <noscript><p class="page muted">Paying, approving and signing need JavaScript; the document and its PDF work without it.</p></noscript>`;
  return { status: 200, html: layout(view.title, body, assets, stripe), stripe };
}

/** The page when the server could not build it (database unreachable…): no detail, a request id to quote. */
export function renderFailurePage(requestId: string, assets: PortalAssets): RenderedPage {
  const body = messagePage(
    'Something went wrong',
    html`We could not open this document just now. Please try again in a minute. If it keeps happening, quote reference ${requestId} to the company that sent you the link.`,
    null,
  );
  return { status: 503, html: layout('Something went wrong', body, assets, false), stripe: false };
}
