/** API keys, export, settings and the dashboard. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, apiList } from './api.js';
import { Alert, formatMoney, formatTime, html, Link, Refusal, SecretOnce, useAction } from './ui.js';

const isAdmin = (org) => org.role === 'owner' || org.role === 'admin';
/** A 404 for the route itself (a server without this part of the API), not for a record. */
const routeMissing = (err) => err?.status === 404 && /^Route /.test(err.message);

/* ---------------------------------------------------------------- API keys */

export function ApiKeysPage() {
  const [keys, setKeys] = useState(null);
  const [loadError, setLoadError] = useState(null);
  const [name, setName] = useState('');
  const [role, setRole] = useState('admin');
  const [created, setCreated] = useState(null);
  const [notice, setNotice] = useState(null);
  const [run, busy, error] = useAction();
  const load = useCallback(async () => {
    try {
      setKeys(await apiList('/api/api-keys'));
    } catch (err) {
      setLoadError(err);
    }
  }, []);
  useEffect(() => {
    load();
  }, [load]);
  const create = (e) => {
    e.preventDefault();
    run(async () => {
      const key = await api('POST', '/api/api-keys', { name, role });
      setCreated(key);
      setName('');
      setNotice(null);
      await load();
    });
  };
  const revoke = (key) => {
    if (!window.confirm(`Revoke the key "${key.name}"? Programs using it stop working at once.`)) return;
    run(async () => {
      await api('DELETE', `/api/api-keys/${encodeURIComponent(key.id)}`);
      await load();
      setNotice(`The key "${key.name}" is revoked.`);
    });
  };
  if (loadError) return html`<section><h1>API keys</h1><${Refusal} error=${loadError} what="API keys" /></section>`;
  return html`<section>
    <h1>API keys</h1>
    <p class="lead">Keys let your other software use this organization's data through the API. Treat them like passwords.</p>
    <${Alert} error=${error} />
    ${notice ? html`<${Alert} kind="info" error=${notice} />` : null}
    ${created ? html`<${SecretOnce} label=${`API key "${created.name}"`} value=${created.key} lost="If you lose it, revoke it and create a new one." onDone=${() => setCreated(null)} />` : null}
    <form class="card row" onSubmit=${create} aria-labelledby="new-key">
      <h2 id="new-key" class="sr-only">Create an API key</h2>
      <label>Key name<input name="keyName" required maxlength="100" value=${name} onInput=${(e) => setName(e.target.value)} placeholder="Accounting sync" /></label>
      <label>Acts as<select name="keyRole" value=${role} onChange=${(e) => setRole(e.target.value)}>
        <option value="admin">Admin (everything, incl. webhooks)</option>
        <option value="member">Member (day-to-day data)</option>
      </select></label>
      <button type="submit" disabled=${busy}>Create key</button>
    </form>
    ${
      keys === null
        ? html`<p class="loading">Loading keys…</p>`
        : keys.length === 0
          ? html`<p class="empty">No API keys yet.</p>`
          : html`<table>
            <caption>Active keys</caption>
            <thead><tr><th scope="col">Name</th><th scope="col">Starts with</th><th scope="col">Role</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
            <tbody>${keys.map(
              (k) => html`<tr>
                <td>${k.name}</td><td class="mono">${k.prefix}…</td><td>${k.role}</td>
                <td>${formatTime(k.createdAt)}</td><td>${k.lastUsedAt ? formatTime(k.lastUsedAt) : 'Never'}</td>
                <td><button type="button" class="danger" disabled=${busy} onClick=${() => revoke(k)} aria-label=${`Revoke ${k.name}`}>Revoke</button></td>
              </tr>`,
            )}</tbody>
          </table>`
    }
  </section>`;
}

/* ---------------------------------------------------------------- Export */

const EXPORT_RESOURCES = [
  'customers',
  'properties',
  'services',
  'invoices',
  'payments',
  'estimates',
  'jobs',
  'contracts',
  'vendors',
  'purchase-orders',
  'bills',
  'bill-payments',
  'time-entries',
  'equipment',
  'winter-routes',
];

function ExportProgress({ job }) {
  const percent = Math.max(0, Math.min(100, Math.round(job.progress?.percent ?? 0)));
  const label =
    job.status === 'completed'
      ? 'Completed'
      : job.status === 'failed'
        ? 'Failed'
        : job.status === 'queued'
          ? 'Waiting to start'
          : 'Exporting';
  return html`<div class="card export-job" data-export=${job.id} data-status=${job.status}>
    <div class="row spread"><strong>${label}</strong><span aria-hidden="true">${percent} %</span></div>
    <progress max="100" value=${percent} aria-label="Export progress" aria-valuetext=${`${percent} percent, ${label.toLowerCase()}`}>${percent} %</progress>
    <p class="muted">${job.progress?.rows ?? 0} of ${job.progress?.totalRows ?? '?'} rows${job.sizeBytes ? ` · ${(job.sizeBytes / 1024).toFixed(1)} KiB` : ''}</p>
    ${
      job.status === 'completed'
        ? html`<p><a class="button" href=${`/api/exports/${encodeURIComponent(job.id)}/download`} download>Download the export (zip)</a>
          ${job.expiresAt ? html` <span class="muted">Available until ${formatTime(job.expiresAt)}</span>` : null}</p>`
        : null
    }
    ${job.status === 'failed' ? html`<${Alert} error="The export failed. Start a new one; if it fails again, contact support." />` : null}
  </div>`;
}

export function ExportPage({ org }) {
  const [format, setFormat] = useState('csv');
  const [chosen, setChosen] = useState([]);
  const [job, setJob] = useState(null);
  const [history, setHistory] = useState(null);
  const [loadError, setLoadError] = useState(null);
  const [run, busy, error] = useAction();
  const timer = useRef(null);

  const loadHistory = useCallback(async () => {
    try {
      setHistory(await api('GET', '/api/exports?limit=10'));
    } catch (err) {
      setLoadError(err);
    }
  }, []);
  useEffect(() => {
    if (isAdmin(org)) loadHistory();
    return () => clearTimeout(timer.current);
  }, [loadHistory, org]);

  const watch = (id) => {
    clearTimeout(timer.current);
    const tick = async () => {
      try {
        const next = await api('GET', `/api/exports/${encodeURIComponent(id)}`);
        setJob(next);
        if (next.status === 'completed' || next.status === 'failed') {
          loadHistory();
          return;
        }
      } catch (err) {
        setLoadError(err);
        return;
      }
      timer.current = setTimeout(tick, 700);
    };
    tick();
  };
  const start = (e) => {
    e.preventDefault();
    run(async () => {
      const created = await api('POST', '/api/exports', { format, ...(chosen.length ? { resources: chosen } : {}) });
      setJob(created);
      watch(created.id);
    });
  };
  const toggle = (r, on) => setChosen(on ? [...chosen, r] : chosen.filter((x) => x !== r));

  if (!isAdmin(org)) {
    return html`<section><h1>Export</h1><${Refusal} error=${{ status: 403, message: 'Exports need the owner or admin role' }} what="Exports" /></section>`;
  }
  if (routeMissing(loadError)) {
    return html`<section><h1>Export</h1><${Alert} error="Bulk export is not available on this server yet." /></section>`;
  }
  return html`<section>
    <h1>Export your data</h1>
    <p class="lead">Download everything (or a few kinds of records) as one zip file, one file per kind of record.</p>
    <${Alert} error=${error || loadError} />
    <form class="card stack" onSubmit=${start} aria-labelledby="new-export">
      <h2 id="new-export">Start an export</h2>
      <fieldset class="inline-options"><legend>File format</legend>
        <label class="check"><input type="radio" name="format" value="csv" checked=${format === 'csv'} onChange=${() => setFormat('csv')} /> CSV (spreadsheets)</label>
        <label class="check"><input type="radio" name="format" value="ndjson" checked=${format === 'ndjson'} onChange=${() => setFormat('ndjson')} /> NDJSON (developers)</label>
      </fieldset>
      <fieldset class="resources"><legend>Records <span class="muted">(none ticked = everything)</span></legend>
        ${EXPORT_RESOURCES.map((r) => html`<label class="check"><input type="checkbox" checked=${chosen.includes(r)} onChange=${(e) => toggle(r, e.target.checked)} /> ${r}</label>`)}
      </fieldset>
      <div><button type="submit" disabled=${busy || (job && (job.status === 'queued' || job.status === 'running'))}>Start export</button></div>
    </form>
    ${job ? html`<${ExportProgress} job=${job} />` : null}
    ${
      history && history.length > 0
        ? html`<table>
          <caption>Recent exports</caption>
          <thead><tr><th scope="col">Started</th><th scope="col">Status</th><th scope="col">Rows</th><th scope="col"><span class="sr-only">Download</span></th></tr></thead>
          <tbody>${history.map(
            (x) => html`<tr><td>${formatTime(x.createdAt)}</td><td>${x.status}</td><td>${x.progress?.rows ?? 0}</td>
              <td>${x.status === 'completed' ? html`<a href=${`/api/exports/${encodeURIComponent(x.id)}/download`} download aria-label=${`Download export of ${formatTime(x.createdAt)}`}>Download</a>` : null}</td></tr>`,
          )}</tbody></table>`
        : null
    }
  </section>`;
}

/* ---------------------------------------------------------------- Settings */

const TEXT_FIELDS = [
  ['companyName', 'Company name', 'text'],
  ['companyEmail', 'Company email', 'email'],
  ['companyPhone', 'Company phone', 'tel'],
];

export function SettingsPage({ org }) {
  const [form, setForm] = useState(null);
  const [plan, setPlan] = useState(null);
  const [loadError, setLoadError] = useState(null);
  const [saved, setSaved] = useState(false);
  const [run, busy, error] = useAction();
  const editable = isAdmin(org);
  useEffect(() => {
    api('GET', '/api/settings').then((s) => {
      setPlan(s.plan);
      setForm({
        companyName: s.companyName ?? '',
        companyEmail: s.companyEmail ?? '',
        companyPhone: s.companyPhone ?? '',
        companyAddress: s.companyAddress ?? '',
        timezone: s.timezone,
        taxRate: String(s.taxRate),
        currency: s.currency,
        paymentTermsDays: String(s.paymentTermsDays),
        billApprovalThreshold: s.billApprovalThreshold === null ? '' : String(s.billApprovalThreshold),
        notifyOwners: s.notifyOwners,
        stripePublishableKey: s.stripePublishableKey ?? '',
        stripeSecretKey: '',
        stripeWebhookSecret: '',
        stripeSecretKeyConfigured: s.stripeSecretKeyConfigured,
        stripeWebhookConfigured: s.stripeWebhookConfigured,
      });
    }, setLoadError);
  }, []);
  if (loadError) return html`<section><h1>Settings</h1><${Alert} error=${loadError} /></section>`;
  if (!form) return html`<p class="loading">Loading settings…</p>`;
  const set = (k) => (e) => {
    setSaved(false);
    setForm({ ...form, [k]: e.target.value });
  };
  const orNull = (v) => (v.trim() === '' ? null : v.trim());
  const save = (e) => {
    e.preventDefault();
    run(async () => {
      await api('PATCH', '/api/settings', {
        companyName: orNull(form.companyName),
        companyEmail: orNull(form.companyEmail),
        companyPhone: orNull(form.companyPhone),
        companyAddress: orNull(form.companyAddress),
        timezone: form.timezone.trim(),
        taxRate: Number(form.taxRate),
        paymentTermsDays: Number(form.paymentTermsDays),
        billApprovalThreshold: form.billApprovalThreshold.trim() === '' ? null : Number(form.billApprovalThreshold),
        notifyOwners: form.notifyOwners,
        stripePublishableKey: orNull(form.stripePublishableKey),
        // The two secrets are write-only: an empty field keeps what is stored.
        ...(form.stripeSecretKey.trim() ? { stripeSecretKey: form.stripeSecretKey.trim() } : {}),
        ...(form.stripeWebhookSecret.trim() ? { stripeWebhookSecret: form.stripeWebhookSecret.trim() } : {}),
      });
      const s = await api('GET', '/api/settings');
      setForm({
        ...form,
        stripeSecretKey: '',
        stripeWebhookSecret: '',
        stripeSecretKeyConfigured: s.stripeSecretKeyConfigured,
        stripeWebhookConfigured: s.stripeWebhookConfigured,
      });
      setSaved(true);
    });
  };
  return html`<section>
    <h1>Settings</h1>
    <p class="lead">Plan: <strong>${plan}</strong>. ${editable ? '' : 'Only owners and admins can change settings; you can read them.'}</p>
    <${Alert} error=${error} />
    ${saved ? html`<${Alert} kind="info" error="Settings saved." />` : null}
    <form class="card grid" onSubmit=${save}>
      <fieldset disabled=${!editable}>
        <legend>Company details</legend>
        ${TEXT_FIELDS.map(([k, label, type]) => html`<label>${label}<input type=${type} name=${k} value=${form[k]} onInput=${set(k)} /></label>`)}
        <label>Company address<textarea name="companyAddress" rows="3" value=${form.companyAddress} onInput=${set('companyAddress')}></textarea></label>
      </fieldset>
      <fieldset disabled=${!editable}>
        <legend>Money and time</legend>
        <label>Timezone<input name="timezone" required value=${form.timezone} onInput=${set('timezone')} /></label>
        <label>Tax rate (%)<input type="number" name="taxRate" min="0" max="100" step="0.001" required value=${form.taxRate} onInput=${set('taxRate')} /></label>
        <label>Payment terms (days)<input type="number" name="paymentTermsDays" min="0" max="365" step="1" required value=${form.paymentTermsDays} onInput=${set('paymentTermsDays')} /></label>
        <label><span>Bill approval threshold (${form.currency}) <span class="muted">empty = no approval step</span></span><input type="number" name="billApprovalThreshold" min="0" step="0.01" value=${form.billApprovalThreshold} onInput=${set('billApprovalThreshold')} /></label>
        <label class="check"><input type="checkbox" name="notifyOwners" checked=${form.notifyOwners} onChange=${(e) => {
          setSaved(false);
          setForm({ ...form, notifyOwners: e.target.checked });
        }} /> Mail the owners when a customer approves an estimate or signs a contract</label>
      </fieldset>
      <fieldset disabled=${!editable} class="full">
        <legend>Card payments (Stripe)</legend>
        <p class="muted small">Customers pay invoices by card on the page their invoice email links to. Copy the keys from Stripe's dashboard (Developers → API keys). In Developers → Webhooks, add an endpoint at <code>${`${window.location.origin}/api/payments/stripe/${org.id}`}</code> and paste its signing secret here. The two secrets are never shown again: leave a field empty to keep what is set.</p>
        <label>Publishable key<input name="stripePublishableKey" placeholder="pk_live_…" autocomplete="off" value=${form.stripePublishableKey} onInput=${set('stripePublishableKey')} /></label>
        <label><span>Secret key <span class="muted">${form.stripeSecretKeyConfigured ? '(set)' : '(not set)'}</span></span><input type="password" name="stripeSecretKey" placeholder=${form.stripeSecretKeyConfigured ? 'Set: type a new key to replace it' : 'sk_live_… or rk_live_…'} autocomplete="off" value=${form.stripeSecretKey} onInput=${set('stripeSecretKey')} /></label>
        <label><span>Webhook signing secret <span class="muted">${form.stripeWebhookConfigured ? '(set)' : '(not set)'}</span></span><input type="password" name="stripeWebhookSecret" placeholder=${form.stripeWebhookConfigured ? 'Set: type a new secret to replace it' : 'whsec_…'} autocomplete="off" value=${form.stripeWebhookSecret} onInput=${set('stripeWebhookSecret')} /></label>
      </fieldset>
      ${editable ? html`<div class="full"><button type="submit" disabled=${busy}>${busy ? 'Saving…' : 'Save settings'}</button></div>` : null}
    </form>
    <p class="card"><${Link} href="/app/settings/texts">Text messages (SMS)<//>: your Twilio account, the number texts go from, quiet hours and reminder channels.</p>
  </section>`;
}

/* ---------------------------------------------------------------- Dashboard */

function Figure({ label, value, note }) {
  return html`<div class="figure"><div class="figure-label">${label}</div><div class="figure-value">${value}</div>${note ? html`<div class="muted small">${note}</div>` : null}</div>`;
}

/** Bars of invoiced and collected per period, as inline SVG with a text alternative. */
export function RevenueChart({ rows, currency }) {
  if (!rows.length) return html`<p class="empty">No revenue in this period.</p>`;
  const W = 720;
  const H = 240;
  const pad = { l: 64, r: 8, t: 12, b: 36 };
  const max = Math.max(1, ...rows.flatMap((r) => [Number(r.invoiced), Number(r.collected)]));
  const band = (W - pad.l - pad.r) / rows.length;
  const bar = Math.max(2, band / 2 - 3);
  const y = (v) => pad.t + (H - pad.t - pad.b) * (1 - Number(v) / max);
  const ticks = [0, 0.5, 1].map((f) => f * max);
  const label = (p) => new Date(`${p}T00:00:00`).toLocaleDateString(undefined, { month: 'short', year: '2-digit' });
  return html`<figure class="chart">
    <svg viewBox=${`0 0 ${W} ${H}`} role="img" aria-labelledby="chart-title">
      <title id="chart-title">Invoiced and collected revenue per period</title>
      ${ticks.map((t) => html`<g><line x1=${pad.l} x2=${W - pad.r} y1=${y(t)} y2=${y(t)} class="grid-line" /><text x=${pad.l - 6} y=${y(t) + 4} text-anchor="end" class="axis">${formatMoney(Math.round(t), currency)}</text></g>`)}
      ${rows.map((r, i) => {
        const x = pad.l + i * band + 2;
        return html`<g>
          <rect class="bar-invoiced" x=${x} y=${y(r.invoiced)} width=${bar} height=${H - pad.b - y(r.invoiced)}><title>${r.period} invoiced ${formatMoney(r.invoiced, currency)}</title></rect>
          <rect class="bar-collected" x=${x + bar + 1} y=${y(r.collected)} width=${bar} height=${H - pad.b - y(r.collected)}><title>${r.period} collected ${formatMoney(r.collected, currency)}</title></rect>
          ${rows.length <= 16 || i % Math.ceil(rows.length / 12) === 0 ? html`<text x=${x + bar} y=${H - pad.b + 16} text-anchor="middle" class="axis">${label(r.period)}</text>` : null}
        </g>`;
      })}
    </svg>
    <figcaption><span class="key key-invoiced"></span> Invoiced <span class="key key-collected"></span> Collected</figcaption>
    <details><summary>Show the numbers</summary>
      <table><caption class="sr-only">Revenue per period</caption><thead><tr><th scope="col">Period</th><th scope="col">Invoiced</th><th scope="col">Collected</th></tr></thead>
      <tbody>${rows.map((r) => html`<tr><td>${r.period}</td><td>${formatMoney(r.invoiced, currency)}</td><td>${formatMoney(r.collected, currency)}</td></tr>`)}</tbody></table>
    </details>
  </figure>`;
}

const isoDay = (d) =>
  `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;

/** The API's default for months (the last 12); the last 12 weeks or 30 days otherwise. */
function revenueRange(interval) {
  if (interval === 'month') return 'interval=month';
  const to = new Date();
  const from = new Date(to);
  from.setDate(from.getDate() - (interval === 'week' ? 7 * 11 : 29));
  return `interval=${interval}&from=${isoDay(from)}&to=${isoDay(to)}`;
}

export function DashboardPage({ org }) {
  const [figures, setFigures] = useState(null);
  const [revenue, setRevenue] = useState(null);
  const [currency, setCurrency] = useState('USD');
  const [interval, setInterval_] = useState('month');
  const [error, setError] = useState(null);
  useEffect(() => {
    api('GET', '/api/dashboard').then(setFigures, setError);
    api('GET', '/api/settings').then(
      (s) => setCurrency(s.currency),
      () => {},
    );
  }, []);
  useEffect(() => {
    api('GET', `/api/dashboard/revenue?${revenueRange(interval)}`).then(setRevenue, setError);
  }, [interval]);
  const money = (v) => formatMoney(v, currency);
  if (routeMissing(error)) {
    return html`<section><h1>${org.name}</h1><p class="lead">Welcome. The dashboard is not available on this server yet; use the menu to manage webhooks, API keys, export and settings.</p></section>`;
  }
  return html`<section>
    <h1>${org.name}</h1>
    <${Alert} error=${error} />
    ${
      figures
        ? html`<h2>This month</h2>
          <div class="figures">
            <${Figure} label="Invoiced" value=${money(figures.revenue.invoiced)} />
            <${Figure} label="Collected" value=${money(figures.revenue.collected)} />
            <${Figure} label="Outstanding receivables" value=${money(figures.receivables.outstanding)} note=${`${figures.receivables.overdueCount} overdue (${money(figures.receivables.overdueAmount)})`} />
            <${Figure} label="Bills to pay" value=${money(figures.payables.outstanding)} note=${`${money(figures.payables.dueNext7Days)} due in 7 days`} />
            <${Figure} label="Jobs today" value=${figures.jobs.scheduledToday} note=${`${figures.jobs.inProgress} in progress, ${figures.jobs.completed} completed this month`} />
            <${Figure} label="Estimates" value=${`${figures.estimates.approved} / ${figures.estimates.sent}`} note=${`approved of sent (${Math.round(figures.estimates.conversionRate * 100)} %)`} />
            <${Figure} label="Active contracts" value=${figures.contracts.active} note=${`${money(figures.contracts.activeRevenue)} revenue`} />
            <${Figure} label="Crew hours" value=${figures.crew.workHours} note=${`${figures.crew.driveHours} h driving`} />
            <${Figure} label="Storms" value=${figures.winter.storms} note=${`${figures.winter.visitsServiced} visits serviced`} />
          </div>
          <h3>Receivables by age</h3>
          <dl class="facts aging">
            <dt>Not yet due</dt><dd>${money(figures.receivables.aging.current)}</dd>
            <dt>1–30 days</dt><dd>${money(figures.receivables.aging.days1to30)}</dd>
            <dt>31–60 days</dt><dd>${money(figures.receivables.aging.days31to60)}</dd>
            <dt>61–90 days</dt><dd>${money(figures.receivables.aging.days61to90)}</dd>
            <dt>Over 90 days</dt><dd>${money(figures.receivables.aging.over90)}</dd>
          </dl>`
        : error
          ? null
          : html`<p class="loading">Loading figures…</p>`
    }
    <div class="row spread">
      <h2>Revenue</h2>
      <label class="inline">Per<select value=${interval} onChange=${(e) => setInterval_(e.target.value)}>
        <option value="month">month (last 12 months)</option>
        <option value="week">week</option>
        <option value="day">day</option>
      </select></label>
    </div>
    ${revenue ? html`<${RevenueChart} rows=${revenue} currency=${currency} />` : null}
  </section>`;
}
