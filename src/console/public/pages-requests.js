/** Requests from the public booking form: new ones first, convert to an estimate or a job, decline. */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, apiList } from './api.js';
import { Alert, Badge, formatTime, html, useAction } from './ui.js';

const TONE = { new: 'pending', converted: 'succeeded', declined: 'dead', archived: 'muted' };
const ORDER = { new: 0, converted: 1, declined: 2, archived: 3 };

function RequestRow({ request, onChanged }) {
  const [run, busy, error] = useAction();
  const act = (path, body) =>
    run(async () => {
      await api('POST', `/api/requests/${request.id}/${path}`, body);
      onChanged();
    });
  const who = [request.firstName, request.lastName].filter(Boolean).join(' ');
  const where = [request.address.street, request.address.city].filter(Boolean).join(', ');
  return html`<tr>
    <td><${Badge} tone=${TONE[request.status] ?? 'muted'}>${request.status}<//></td>
    <td><strong>${who}</strong><br /><span class="muted">${request.email ?? request.phone ?? ''}</span></td>
    <td>${where}</td>
    <td>${request.description}${request.preferredDates.length > 0 ? html`<br /><span class="muted">Preferred: ${request.preferredDates.join(', ')} (${request.preferredTime})</span>` : ''}</td>
    <td>${formatTime(request.createdAt)}</td>
    <td>
      ${
        request.status === 'new'
          ? html`<div class="actions">
              <button type="button" disabled=${busy} onClick=${() => act('convert', { to: 'estimate' })}>To estimate</button>
              <button type="button" disabled=${busy} onClick=${() => act('convert', { to: 'job' })}>To job</button>
              <button type="button" class="secondary" disabled=${busy} onClick=${() => act('decline', {})}>Decline</button>
            </div>`
          : request.estimateId
            ? html`<span class="muted">Estimate ${request.estimateId}</span>`
            : request.jobId
              ? html`<span class="muted">Job ${request.jobId}</span>`
              : ''
      }
      <${Alert} error=${error} />
    </td>
  </tr>`;
}

export function RequestsPage() {
  const [rows, setRows] = useState(null);
  const [error, setError] = useState(null);
  const load = useCallback(() => {
    apiList('/api/requests').then(
      // New first, then newest first within each status (the API lists newest first).
      (list) => setRows([...list].sort((a, b) => (ORDER[a.status] ?? 9) - (ORDER[b.status] ?? 9))),
      setError,
    );
  }, []);
  useEffect(load, [load]);
  return html`<section>
    <h1>Requests</h1>
    <p class="muted">What people sent through your booking form (set its address in Settings: bookingSlug).</p>
    <${Alert} error=${error} />
    ${
      rows === null
        ? html`<p>Loading…</p>`
        : rows.length === 0
          ? html`<p>No requests yet.</p>`
          : html`<table>
              <thead><tr><th>Status</th><th>From</th><th>Where</th><th>What</th><th>Sent</th><th></th></tr></thead>
              <tbody>${rows.map((r) => html`<${RequestRow} key=${r.id} request=${r} onChanged=${load} />`)}</tbody>
            </table>`
    }
  </section>`;
}
