/**
 * The books: the period close, the journal export for the accountant, and the QuickBooks Online
 * connection with the records that did not sync (docs/accounting.md).
 */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { Alert, Badge, formatTime, html, Refusal, useAction } from './ui.js';

const isAdmin = (org) => org.role === 'owner' || org.role === 'admin';

const FORMATS = [
  ['iif', 'IIF (QuickBooks Desktop)'],
  ['qbo', 'QuickBooks Online journal import (CSV)'],
  ['xero', 'Xero manual journal (CSV)'],
  ['csv', 'CSV (spreadsheets)'],
  ['json', 'JSON (developers)'],
];

/** Today and the first and last day of last month, as YYYY-MM-DD in the browser's calendar. */
function defaults() {
  const iso = (d) =>
    `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
  const now = new Date();
  return {
    today: iso(now),
    from: iso(new Date(now.getFullYear(), now.getMonth() - 1, 1)),
    to: iso(new Date(now.getFullYear(), now.getMonth(), 0)),
  };
}

export function BooksPage({ org }) {
  const initial = defaults();
  const [close, setClose] = useState(null);
  const [loadError, setLoadError] = useState(null);
  const [through, setThrough] = useState(initial.to);
  const [notice, setNotice] = useState(null);
  const [from, setFrom] = useState(initial.from);
  const [to, setTo] = useState(initial.to);
  const [format, setFormat] = useState('iif');
  const [run, busy, error] = useAction();

  const load = useCallback(async () => {
    try {
      setClose(await api('GET', '/api/ledger/close'));
    } catch (err) {
      setLoadError(err);
    }
  }, []);
  useEffect(() => {
    if (isAdmin(org)) load();
  }, [load, org]);

  if (!isAdmin(org)) {
    return html`<section><h1>Books</h1><${Refusal} error=${{ status: 403, message: 'The books need the owner or admin role' }} what="The books" /></section>`;
  }
  const doClose = (e) => {
    e.preventDefault();
    run(async () => {
      const next = await api('POST', '/api/ledger/close', { through });
      setClose(next);
      setNotice(`The books are closed through ${next.closedThrough}.`);
    });
  };
  const reopen = () =>
    run(async () => {
      const next = await api('POST', '/api/ledger/reopen', { through: null });
      setClose(next);
      setNotice('The books are open again.');
    });
  const bad = from > to ? 'The first day must not be after the last.' : null;
  const href = `/api/ledger/journal?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&format=${format}`;

  return html`<section>
    <h1>Books</h1>
    <p class="lead">Close a month your accountant has finished, and send her its journal in her software's format.</p>
    <${Alert} error=${error || loadError} />
    ${notice ? html`<${Alert} kind="success" error=${notice} />` : null}
    <div class="card stack" aria-labelledby="close-title">
      <h2 id="close-title">Period close</h2>
      <p data-testid="closed-through">
        ${close === null ? 'Loading…' : close.closedThrough ? html`Closed through <strong>${close.closedThrough}</strong>: nothing can be posted on or before that day.` : 'Nothing is closed.'}
      </p>
      <form class="inline-options" onSubmit=${doClose}>
        <label>Close through <input type="date" value=${through} max=${initial.today} required onInput=${(e) => setThrough(e.target.value)} /></label>
        <button type="submit" disabled=${busy}>Close the books</button>
      </form>
      ${org.role === 'owner' && close?.closedThrough ? html`<div><button type="button" class="secondary" disabled=${busy} onClick=${reopen}>Reopen everything</button></div>` : null}
    </div>
    <form class="card stack" aria-labelledby="journal-title" onSubmit=${(e) => e.preventDefault()}>
      <h2 id="journal-title">Journal export</h2>
      <div class="inline-options">
        <label>From <input type="date" value=${from} required onInput=${(e) => setFrom(e.target.value)} /></label>
        <label>To <input type="date" value=${to} required onInput=${(e) => setTo(e.target.value)} /></label>
        <label>Format <select value=${format} onChange=${(e) => setFormat(e.target.value)}>
          ${FORMATS.map(([value, label]) => html`<option value=${value}>${label}</option>`)}
        </select></label>
      </div>
      ${bad ? html`<${Alert} error=${bad} />` : html`<div><a class="button" href=${href} download>Download the journal</a></div>`}
    </form>
    <${QuickBooksCard} />
  </section>`;
}

const QBO = '/api/integrations/quickbooks';
const ENTITY_LABEL = { customer: 'Customer', invoice: 'Invoice', payment: 'Payment', refund: 'Refund' };

function ConnectionLine({ status }) {
  if (status.status === 'disconnected')
    return html`<p data-testid="quickbooks-status"><${Badge} tone="neutral">Not connected<//> Nothing is sent to QuickBooks.</p>`;
  if (status.status === 'error')
    return html`<p data-testid="quickbooks-status"><${Badge} tone="bad">Needs connecting again<//> ${status.lastError ?? ''}</p>`;
  return html`<p data-testid="quickbooks-status">
    <${Badge} tone="ok">Connected<//> to company <span class="mono">${status.realmId}</span> since ${formatTime(status.connectedAt)}.
    ${status.lastSyncAt ? ` Last sync ${formatTime(status.lastSyncAt)}.` : ' Nothing synced yet.'}
    ${` ${status.pending} waiting, ${status.failing} failed.`}
  </p>`;
}

/** QuickBooks Online: connect (Intuit's page), disconnect, and the records QuickBooks refused, each with a retry. */
function QuickBooksCard() {
  const [status, setStatus] = useState(null);
  const [failed, setFailed] = useState(null);
  const [loadError, setLoadError] = useState(null);
  const [notice, setNotice] = useState(null);
  const [run, busy, error] = useAction();

  const load = useCallback(async () => {
    try {
      const [s, f] = await Promise.all([api('GET', QBO), api('GET', `${QBO}/records?status=failed`)]);
      setStatus(s);
      setFailed(f);
    } catch (err) {
      setLoadError(err);
    }
  }, []);
  useEffect(() => {
    load();
  }, [load]);

  const connect = () =>
    run(async () => {
      const { authorizeUrl } = await api('POST', `${QBO}/connect`);
      window.location.assign(authorizeUrl);
    });
  const disconnect = () =>
    run(async () => {
      await api('POST', `${QBO}/disconnect`);
      setNotice('QuickBooks is disconnected: nothing more is sent.');
      await load();
    });
  const retry = (record) =>
    run(async () => {
      await api('POST', `${QBO}/records/${encodeURIComponent(record.id)}/retry`);
      setNotice(`${ENTITY_LABEL[record.entity] ?? record.entity} ${record.entityId} is sent again.`);
      await load();
    });

  return html`<div class="card stack" aria-labelledby="quickbooks-title">
    <h2 id="quickbooks-title">QuickBooks Online</h2>
    <p>Customers, invoices, payments and refunds go to your QuickBooks company as they happen, each once.</p>
    <${Alert} error=${error || loadError} />
    ${notice ? html`<${Alert} kind="success" error=${notice} />` : null}
    ${status === null ? html`<p class="loading">Loading the connection…</p>` : html`<${ConnectionLine} status=${status} />`}
    ${
      status === null
        ? null
        : status.status === 'connected'
          ? html`<div><button type="button" class="secondary" disabled=${busy} onClick=${disconnect}>Disconnect QuickBooks</button></div>`
          : html`<div><button type="button" disabled=${busy} onClick=${connect}>Connect QuickBooks</button></div>`
    }
    ${
      failed && failed.length > 0
        ? html`<table>
          <caption>Records QuickBooks did not take</caption>
          <thead><tr><th scope="col">Record</th><th scope="col">QuickBooks says</th><th scope="col">Tries</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
          <tbody>${failed.map(
            (r) => html`<tr>
              <td>${ENTITY_LABEL[r.entity] ?? r.entity} <span class="mono">${r.entityId}</span></td>
              <td>${r.error}${r.errorCode ? html` <span class="muted">(${r.errorCode})</span>` : null}</td>
              <td>${r.attempts}</td>
              <td><button type="button" class="secondary" disabled=${busy} aria-label=${`Retry ${r.entity} ${r.entityId}`} onClick=${() => retry(r)}>Retry</button></td>
            </tr>`,
          )}</tbody>
        </table>`
        : failed
          ? html`<p class="empty" data-testid="quickbooks-failed">No failed records.</p>`
          : null
    }
  </div>`;
}
