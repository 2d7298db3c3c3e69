/** Recurring schedules and their next visits (operations.md §9), read-only. */
import { useEffect, useState } from 'preact/hooks';
import { api, apiList } from './api.js';
import { Alert, formatMoney, html } from './ui.js';

/** How many of a schedule's next visit dates the page shows. */
const NEXT = 3;

/** `2027-04-06` as "Tue, Apr 6, 2027": a calendar date, so read as UTC and never shifted. */
function formatDate(date) {
  return new Date(`${date}T00:00:00Z`).toLocaleDateString('en-US', {
    timeZone: 'UTC',
    weekday: 'short',
    month: 'short',
    day: 'numeric',
    year: 'numeric',
  });
}

export function SchedulesPage() {
  const [rows, setRows] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    (async () => {
      try {
        const schedules = await apiList('/api/jobs/schedules', 100);
        // The list has no occurrences: each schedule's own answer carries its next dates.
        const details = await Promise.all(
          schedules.map((s) => api('GET', `/api/jobs/schedules/${encodeURIComponent(s.id)}`)),
        );
        setRows(details);
      } catch (err) {
        setError(err);
      }
    })();
  }, []);
  return html`<section>
    <h1>Schedules</h1>
    <p class="lead">Recurring visits: each schedule fills the calendar ahead with its visits.</p>
    <${Alert} error=${error} />
    ${
      rows === null
        ? error
          ? null
          : html`<p class="muted">Loading…</p>`
        : rows.length === 0
          ? html`<p class="empty">No schedules yet. Create one with <code>POST /api/jobs/schedules</code>.</p>`
          : html`<table>
            <caption>Schedules and their next visits</caption>
            <thead><tr><th scope="col">Title</th><th scope="col">Rule</th><th scope="col">Status</th><th scope="col">Per visit</th><th scope="col">Next visits</th></tr></thead>
            <tbody>${rows.map(
              (s) => html`<tr>
                <td>${s.title}</td>
                <td class="mono">${s.rrule}</td>
                <td>${s.status}</td>
                <td>${formatMoney(s.total)}</td>
                <td>${
                  s.status === 'active' && s.nextOccurrences.length > 0
                    ? html`<ul class="plain">${s.nextOccurrences
                        .slice(0, NEXT)
                        .map(
                          (d) =>
                            html`<li><time datetime=${d}>${formatDate(d)}</time>${s.startTime ? ` at ${s.startTime}` : ''}</li>`,
                        )}</ul>`
                    : html`<span class="muted">${s.status === 'active' ? 'none' : `none while ${s.status}`}</span>`
                }</td>
              </tr>`,
            )}</tbody>
          </table>`
    }
  </section>`;
}
