/**
 * A customer's invoices and estimates on their page, each with its send action: the portal link
 * by email, by text, or both (`POST /api/invoices/{id}/send {channels}`, estimates' the same;
 * operations.md §10). A text the API refuses (409: no consent, no mobile number, Twilio not set
 * up) is shown as the list of what is missing, and nothing is sent.
 */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, apiList } from './api.js';
import { Alert, Badge, formatMoney, html, useAction } from './ui.js';

/** States a document can be sent (or sent again) from. */
const SENDABLE = {
  invoices: new Set(['draft', 'sent', 'viewed', 'partially_paid', 'overdue']),
  estimates: new Set(['draft', 'sent', 'viewed']),
};
const TONE = {
  draft: 'neutral',
  sent: 'warn',
  viewed: 'warn',
  paid: 'ok',
  approved: 'ok',
  void: 'bad',
  declined: 'bad',
};

/** "This customer cannot be texted: a; b" (the API's 409) as a heading and a list; any other error as it is. */
export function SendRefused({ error }) {
  if (!error) return null;
  const m = /^([^:]+):\s*(.+)$/.exec(error.message ?? '');
  if (error.status !== 409 || !m) return html`<${Alert} error=${error} />`;
  return html`<div class="alert alert-error" role="alert">
    <strong>${m[1]}.</strong>
    <ul>${m[2].split(/;\s*/).map((reason) => html`<li>${reason}</li>`)}</ul>
  </div>`;
}

/** What a send did, in words: the addresses mailed and the number texted. */
function sentSummary(sent) {
  const parts = [];
  if (sent.emailedTo?.length > 0) parts.push(`emailed to ${sent.emailedTo.join(', ')}`);
  if (sent.textedTo) parts.push(`texted to ${sent.textedTo}`);
  return parts.length > 0
    ? `Sent: ${parts.join('; ')}.`
    : 'Marked sent; nothing was mailed (the customer has no email).';
}

function SendForm({ kind, doc, number, customer, onSent }) {
  const [email, setEmail] = useState(Boolean(customer.email));
  const [sms, setSms] = useState(false);
  const [sent, setSent] = useState(null);
  const [run, busy, error] = useAction();
  const channels = [...(email ? ['email'] : []), ...(sms ? ['sms'] : [])];
  const send = (e) => {
    e.preventDefault();
    setSent(null);
    run(async () => {
      setSent(await api('POST', `/api/${kind}/${encodeURIComponent(doc.id)}/send`, { channels }));
      await onSent();
    });
  };
  return html`<form class="stack send-document" onSubmit=${send} aria-label=${`Send ${number}`}>
    <fieldset>
      <legend class="small">Send ${number} by</legend>
      <label class="check"><input type="checkbox" name="email" checked=${email} onChange=${(e) => setEmail(e.target.checked)} /> Email${customer.email ? '' : ' (no address)'}</label>
      <label class="check"><input type="checkbox" name="sms" checked=${sms} onChange=${(e) => setSms(e.target.checked)} /> Text message</label>
      <button type="submit" disabled=${busy || channels.length === 0}>${busy ? 'Sending…' : doc.status === 'draft' ? `Send ${number}` : `Send ${number} again`}</button>
    </fieldset>
    ${sent ? html`<p class="small" role="status">${sentSummary(sent)}</p>` : null}
    <${SendRefused} error=${error} />
  </form>`;
}

function DocumentRow({ kind, doc, customer, currency, onSent }) {
  const number = kind === 'invoices' ? doc.invoiceNumber : doc.estimateNumber;
  return html`<li class="stack">
    <div class="row spread">
      <strong>${number}</strong>
      <span>${formatMoney(doc.total, currency)} <${Badge} tone=${TONE[doc.status] ?? 'neutral'}>${doc.status.replace('_', ' ')}<//></span>
    </div>
    ${SENDABLE[kind].has(doc.status) ? html`<${SendForm} kind=${kind} doc=${doc} number=${number} customer=${customer} onSent=${onSent} />` : null}
  </li>`;
}

export function CustomerDocuments({ customer, currency, onSent }) {
  const [docs, setDocs] = useState(null);
  const [error, setError] = useState(null);
  const q = `customerId=${encodeURIComponent(customer.id)}`;
  const load = useCallback(async () => {
    try {
      const [invoices, estimates] = await Promise.all([
        apiList(`/api/invoices?${q}`, 50),
        apiList(`/api/estimates?${q}`, 50),
      ]);
      setDocs({ invoices, estimates });
      setError(null);
    } catch (err) {
      setError(err);
    }
  }, [q]);
  useEffect(() => {
    load();
  }, [load]);
  const sentAndReload = async () => {
    await load();
    await onSent?.();
  };
  const list = (kind, rows, empty) =>
    rows.length === 0
      ? html`<p class="empty small">${empty}</p>`
      : html`<ul class="plain documents">${rows.map(
          (d) =>
            html`<${DocumentRow} key=${d.id} kind=${kind} doc=${d} customer=${customer} currency=${currency} onSent=${sentAndReload} />`,
        )}</ul>`;
  return html`<section class="card stack" aria-labelledby="documents-title">
    <h2 id="documents-title">Invoices and estimates</h2>
    <p class="muted small">Send the customer their link by email, by text, or both. A text needs their opt-in and a mobile number; it waits for the end of the quiet hours.</p>
    <${Alert} error=${error} />
    ${
      docs === null
        ? error
          ? null
          : html`<p class="loading">Loading documents…</p>`
        : html`<h3>Invoices</h3>${list('invoices', docs.invoices, 'No invoices.')}
            <h3>Estimates</h3>${list('estimates', docs.estimates, 'No estimates.')}`
    }
  </section>`;
}
