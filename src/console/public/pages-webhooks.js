/** Webhooks: endpoints, the event picker, the once-shown secret, deliveries and their attempts. */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, apiList } from './api.js';
import { Alert, Badge, formatTime, html, Link, navigate, Refusal, SecretOnce, STATUS_LABEL, useAction } from './ui.js';

let catalog;
/** The event catalog, read from the API's own document (its `webhooks` section names every event). */
async function eventCatalog() {
  if (!catalog) {
    catalog = fetch('/openapi.json', { credentials: 'same-origin' })
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error('no document'))))
      .then((doc) => Object.keys(doc.webhooks ?? {}).sort())
      .catch((err) => {
        catalog = undefined;
        throw err;
      });
  }
  return catalog;
}

function groupByResource(events) {
  const groups = new Map();
  for (const e of events) {
    const resource = e.split('.')[0];
    if (!groups.has(resource)) groups.set(resource, []);
    groups.get(resource).push(e);
  }
  return [...groups.entries()];
}

const resourceLabel = (r) => r.replace(/[-_]/g, ' ').replace(/^./, (c) => c.toUpperCase());

function EventPicker({ selected, onChange }) {
  const [events, setEvents] = useState([]);
  const [error, setError] = useState(null);
  useEffect(() => {
    eventCatalog().then(setEvents, () =>
      setError('The list of events could not be loaded; reload the page to try again.'),
    );
  }, []);
  const all = selected.includes('*');
  const toggle = (name, on) => {
    const next = new Set(selected);
    if (on) next.add(name);
    else next.delete(name);
    onChange([...next]);
  };
  return html`<fieldset class="events">
    <legend>Events to send</legend>
    <${Alert} error=${error} />
    <label class="check all"><input type="checkbox" checked=${all} onChange=${(e) => onChange(e.target.checked ? ['*'] : [])} /> All events (<code>*</code>), including ones added later</label>
    <div class="event-groups">
      ${groupByResource(events).map(
        ([resource, list]) => html`<fieldset class="event-group" disabled=${all}>
          <legend>${resourceLabel(resource)}</legend>
          ${list.map(
            (name) =>
              html`<label class="check"><input type="checkbox" value=${name} checked=${all || selected.includes(name)} onChange=${(e) => toggle(name, e.target.checked)} /> ${name}</label>`,
          )}
        </fieldset>`,
      )}
    </div>
  </fieldset>`;
}

function CreateEndpoint({ onCreated, onCancel }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState([]);
  const [run, busy, error, setError] = useAction();
  const submit = (e) => {
    e.preventDefault();
    if (events.length === 0) {
      setError('Pick at least one event, or All events.');
      return;
    }
    run(async () => {
      const created = await api('POST', '/api/webhooks', {
        url,
        events,
        ...(description.trim() ? { description: description.trim() } : {}),
      });
      onCreated(created);
    });
  };
  return html`<form class="card stack" onSubmit=${submit} aria-labelledby="new-endpoint">
    <h2 id="new-endpoint">Add an endpoint</h2>
    <${Alert} error=${error} />
    <label>Endpoint URL<input type="url" name="url" required placeholder="https://example.com/webhooks" value=${url} onInput=${(e) => setUrl(e.target.value)} /></label>
    <label><span>Description <span class="muted">(optional)</span></span><input name="description" maxlength="500" value=${description} onInput=${(e) => setDescription(e.target.value)} /></label>
    <${EventPicker} selected=${events} onChange=${setEvents} />
    <div class="row">
      <button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create endpoint'}</button>
      <button type="button" class="secondary" onClick=${onCancel}>Cancel</button>
    </div>
  </form>`;
}

function EndpointStatus({ endpoint }) {
  return endpoint.active ? html`<${Badge} tone="ok">Active<//>` : html`<${Badge} tone="bad">Disabled<//>`;
}

export function WebhooksPage() {
  const [endpoints, setEndpoints] = useState(null);
  const [error, setError] = useState(null);
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState(null);
  const load = useCallback(async () => {
    try {
      setEndpoints(await apiList('/api/webhooks'));
      setError(null);
    } catch (err) {
      setError(err);
    }
  }, []);
  useEffect(() => {
    load();
  }, [load]);
  const created = (endpoint) => {
    setCreating(false);
    setSecret(endpoint);
    load();
  };
  return html`<section>
    <h1>Webhooks</h1>
    <p class="lead">Send events (a paid invoice, a completed job…) to your own systems. Each request is signed with the endpoint's secret.</p>
    ${error ? html`<${Refusal} error=${error} what="Webhooks" />` : null}
    ${
      secret
        ? html`<${SecretOnce} label=${`Signing secret for ${secret.url}`} value=${secret.secret} onDone=${() => setSecret(null)} />`
        : null
    }
    ${
      endpoints
        ? html`
          ${creating ? html`<${CreateEndpoint} onCreated=${created} onCancel=${() => setCreating(false)} />` : html`<p><button type="button" onClick=${() => setCreating(true)}>Add endpoint</button></p>`}
          ${
            endpoints.length === 0
              ? html`<p class="empty">No endpoints yet. Add one to start receiving events.</p>`
              : html`<table>
                <caption>Endpoints</caption>
                <thead><tr><th scope="col">URL</th><th scope="col">Status</th><th scope="col">Events</th><th scope="col">Failures in a row</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
                <tbody>${endpoints.map(
                  (e) => html`<tr>
                    <td class="mono">${e.url}${e.description ? html`<div class="muted">${e.description}</div>` : null}</td>
                    <td><${EndpointStatus} endpoint=${e} /></td>
                    <td>${e.events.join(', ')}</td>
                    <td>${e.consecutiveFailures}</td>
                    <td><${Link} href=${`/app/webhooks/${encodeURIComponent(e.id)}`} aria-label=${`Manage ${e.url}`}>Manage<//></td>
                  </tr>`,
                )}</tbody>
              </table>`
          }`
        : error
          ? null
          : html`<p class="loading">Loading endpoints…</p>`
    }
  </section>`;
}

function AttemptLog({ deliveryId }) {
  const [detail, setDetail] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    api('GET', `/api/webhook-deliveries/${encodeURIComponent(deliveryId)}`).then(setDetail, setError);
  }, [deliveryId]);
  if (error) return html`<${Alert} error=${error} />`;
  if (!detail) return html`<p class="loading">Loading attempts…</p>`;
  if (detail.attemptLog.length === 0) return html`<p class="empty">No attempt yet.</p>`;
  return html`<table class="attempts">
    <caption>Attempts of delivery ${detail.id}</caption>
    <thead><tr><th scope="col">Time</th><th scope="col">Status code</th><th scope="col">Duration</th><th scope="col">Error</th><th scope="col">Response</th></tr></thead>
    <tbody>${detail.attemptLog.map(
      (a) => html`<tr>
        <td>${formatTime(a.attemptedAt)}</td>
        <td>${a.statusCode ?? '—'}</td>
        <td>${a.durationMs} ms</td>
        <td>${a.error ?? '—'}</td>
        <td><code class="excerpt">${a.responseBody ? a.responseBody.slice(0, 300) : '—'}</code></td>
      </tr>`,
    )}</tbody>
  </table>`;
}

const TONE = { pending: 'neutral', failed: 'warn', succeeded: 'ok', dead: 'bad' };

function Deliveries({ endpointId, onChange }) {
  const [status, setStatus] = useState('');
  const [rows, setRows] = useState(null);
  const [open, setOpen] = useState(null);
  const [run, busy, error] = useAction();
  const [loadError, setLoadError] = useState(null);
  const load = useCallback(async () => {
    try {
      const q = status ? `?status=${status}&limit=50` : '?limit=50';
      setRows(await api('GET', `/api/webhooks/${encodeURIComponent(endpointId)}/deliveries${q}`));
      setLoadError(null);
    } catch (err) {
      setLoadError(err);
    }
  }, [endpointId, status]);
  useEffect(() => {
    load();
    const timer = setInterval(load, 2000);
    return () => clearInterval(timer);
  }, [load]);
  const requeue = (id) =>
    run(async () => {
      await api('POST', `/api/webhook-deliveries/${encodeURIComponent(id)}/requeue`);
      await load();
      onChange();
    });
  return html`<section aria-labelledby="deliveries-title">
    <div class="row spread">
      <h2 id="deliveries-title">Deliveries</h2>
      <label class="inline">Show
        <select value=${status} onChange=${(e) => setStatus(e.target.value)}>
          <option value="">All deliveries</option>
          <option value="dead">Dead</option>
          <option value="failed">Retrying</option>
          <option value="pending">Pending</option>
          <option value="succeeded">Succeeded</option>
        </select>
      </label>
      <button type="button" class="secondary" onClick=${load}>Refresh</button>
    </div>
    <p class="muted">A delivery is retried on a schedule; after the last attempt it is <strong>dead</strong>. Fix your receiver, then requeue it.</p>
    <${Alert} error=${error || loadError} />
    ${
      rows === null
        ? html`<p class="loading">Loading deliveries…</p>`
        : rows.length === 0
          ? html`<p class="empty">No ${status ? `${STATUS_LABEL[status].toLowerCase()} ` : ''}deliveries.</p>`
          : html`<table>
            <caption class="sr-only">Deliveries</caption>
            <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last response</th><th scope="col">Last attempt</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
            <tbody>${rows.map(
              (d) => html`<tr data-delivery=${d.id} data-status=${d.status}>
                  <td>${d.event}<div class="muted mono small">${d.id}</div></td>
                  <td><${Badge} tone=${TONE[d.status]}>${STATUS_LABEL[d.status]}<//></td>
                  <td>${d.attempts}</td>
                  <td>${d.lastStatusCode ?? d.lastError ?? '—'}</td>
                  <td>${formatTime(d.lastAttemptAt)}</td>
                  <td class="actions">
                    <button type="button" class="secondary" aria-expanded=${open === d.id} onClick=${() => setOpen(open === d.id ? null : d.id)} aria-label=${`Attempts of ${d.event} delivery ${d.id}`}>Attempts</button>
                    ${d.status === 'dead' ? html`<button type="button" disabled=${busy} onClick=${() => requeue(d.id)} aria-label=${`Requeue ${d.event} delivery ${d.id}`}>Requeue</button>` : null}
                  </td>
                </tr>
                ${open === d.id ? html`<tr class="detail"><td colspan="6"><${AttemptLog} key=${`${d.id}-${d.attempts}-${d.status}`} deliveryId=${d.id} /></td></tr>` : null}`,
            )}</tbody>
          </table>`
    }
  </section>`;
}

export function EndpointPage({ id }) {
  const [endpoint, setEndpoint] = useState(null);
  const [loadError, setLoadError] = useState(null);
  const [secret, setSecret] = useState(null);
  const [notice, setNotice] = useState(null);
  const [run, busy, error] = useAction();
  const load = useCallback(async () => {
    try {
      setEndpoint(await api('GET', `/api/webhooks/${encodeURIComponent(id)}`));
    } catch (err) {
      setLoadError(err);
    }
  }, [id]);
  useEffect(() => {
    load();
  }, [load]);
  const path = `/api/webhooks/${encodeURIComponent(id)}`;
  const rotate = () => {
    if (
      !window.confirm(
        'Rotate the signing secret? The old secret keeps signing for 24 hours so you can update your receiver.',
      )
    )
      return;
    run(async () => {
      const r = await api('POST', `${path}/rotate-secret`);
      setSecret(r.secret);
      setNotice(null);
      await load();
    });
  };
  const enable = () =>
    run(async () => {
      await api('POST', `${path}/enable`);
      await load();
      setNotice('The endpoint is enabled again. New events will be delivered.');
    });
  const test = () =>
    run(async () => {
      await api('POST', `${path}/test`);
      setNotice('A test event (webhook.test) is on its way. It appears in the deliveries below.');
    });
  const remove = () => {
    if (!window.confirm('Delete this endpoint? It stops receiving events.')) return;
    run(async () => {
      await api('DELETE', path);
      navigate('/app/webhooks');
    });
  };
  if (loadError) {
    return html`<section><h1>Webhook endpoint</h1>${loadError.status === 404 ? html`<${Alert} error="This endpoint does not exist (it may have been deleted)." />` : html`<${Refusal} error=${loadError} what="Webhooks" />`}
      <p><${Link} href="/app/webhooks">Back to webhooks<//></p></section>`;
  }
  if (!endpoint) return html`<p class="loading">Loading endpoint…</p>`;
  return html`<section>
    <p><${Link} href="/app/webhooks">← All endpoints<//></p>
    <h1 class="mono">${endpoint.url}</h1>
    ${endpoint.description ? html`<p>${endpoint.description}</p>` : null}
    <${Alert} error=${error} />
    ${notice ? html`<${Alert} kind="info" error=${notice} />` : null}
    ${secret ? html`<${SecretOnce} label="New signing secret" value=${secret} onDone=${() => setSecret(null)} />` : null}
    ${
      endpoint.active
        ? null
        : html`<div class="alert alert-error" role="status">
            <strong>This endpoint is disabled</strong> since ${formatTime(endpoint.deactivatedAt)} after ${endpoint.consecutiveFailures} failed deliveries in a row.
            Fix the receiver, then re-enable it and requeue the dead deliveries.
          </div>`
    }
    <dl class="facts">
      <dt>Status</dt><dd><${EndpointStatus} endpoint=${endpoint} /></dd>
      <dt>Events</dt><dd>${endpoint.events.join(', ')}</dd>
      <dt>Failed deliveries in a row</dt><dd>${endpoint.consecutiveFailures}</dd>
      <dt>Created</dt><dd>${formatTime(endpoint.createdAt)}</dd>
      ${endpoint.previousSecretExpiresAt ? html`<dt>Previous secret signs until</dt><dd>${formatTime(endpoint.previousSecretExpiresAt)}</dd>` : null}
    </dl>
    <div class="row">
      <button type="button" onClick=${test} disabled=${busy}>Send test event</button>
      ${endpoint.active ? null : html`<button type="button" onClick=${enable} disabled=${busy}>Re-enable</button>`}
      <button type="button" class="secondary" onClick=${rotate} disabled=${busy}>Rotate secret</button>
      <button type="button" class="danger" onClick=${remove} disabled=${busy}>Delete endpoint</button>
    </div>
    <${Deliveries} endpointId=${endpoint.id} onChange=${load} />
  </section>`;
}
