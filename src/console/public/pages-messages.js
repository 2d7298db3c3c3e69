/**
 * Texts (operations.md §10): the customers list, a customer's page with their SMS consent,
 * their conversation (texts both ways, a box to send one) and their invoices and estimates to send
 * by email and/or text (customer-documents.js), and the SMS settings (Twilio).
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, apiList } from './api.js';
import { CustomerDocuments, SendRefused } from './customer-documents.js';
import { Alert, Badge, formatTime, html, Link, useAction } from './ui.js';

const isAdmin = (org) => org.role === 'owner' || org.role === 'admin';

const CONSENT = {
  opted_in: ['ok', 'Opted in to texts'],
  opted_out: ['bad', 'Opted out of texts'],
  unknown: ['neutral', 'No text consent yet'],
};
const SOURCE = {
  staff: 'recorded by staff',
  portal: 'on the customer page',
  keyword: 'texted a keyword (STOP / START) or the carrier reported it',
  request_form: 'on the booking form',
};
const STATUS = {
  queued: ['neutral', 'Queued'],
  sending: ['neutral', 'Sending'],
  sent: ['warn', 'Sent'],
  delivered: ['ok', 'Delivered'],
  undelivered: ['bad', 'Not delivered'],
  failed: ['bad', 'Failed'],
  skipped: ['bad', 'Not sent'],
  received: ['ok', 'Received'],
};
const KIND = {
  manual: 'Text',
  visit_reminder: 'Visit reminder',
  on_my_way: 'On my way',
  invoice_link: 'Invoice link',
  estimate_link: 'Estimate link',
  auto_reply: 'Automatic answer (HELP)',
};

/** GSM-7's basic characters (and its extension table, which counts two); anything else is UCS-2. */
const GSM7 =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM7_EXT = '^{}\\[~]|€\f';

/** How many SMS parts a body takes (as the API counts `segments`). */
export function segmentsOf(body) {
  let units = 0;
  let gsm = true;
  for (const ch of body) {
    if (GSM7.includes(ch)) units += 1;
    else if (GSM7_EXT.includes(ch)) units += 2;
    else gsm = false;
  }
  if (!gsm) {
    const n = [...body].reduce((s, ch) => s + (ch.codePointAt(0) > 0xffff ? 2 : 1), 0);
    return n <= 70 ? 1 : Math.ceil(n / 67);
  }
  return units <= 160 ? 1 : Math.ceil(units / 153);
}

/**
 * What stops this organization texting this customer, in words (the API's 409 says the same,
 * naming the settings); empty when a text can go. `settings` may be null (not readable).
 */
function blockers(settings, customer) {
  const out = [];
  if (settings && !settings.smsEnabled) out.push('texting is switched off in the SMS settings');
  if (settings && !settings.twilioConfigured)
    out.push('Twilio is not connected (SMS settings: account SID and auth token)');
  if (settings && !settings.smsFrom) out.push('there is no number to send from (SMS settings)');
  if (!customer.phoneE164) {
    out.push(
      customer.phone
        ? `the customer's phone "${customer.phone}" is not a valid mobile number`
        : 'the customer has no phone number',
    );
  }
  if (customer.smsConsent.status === 'opted_out') out.push('the customer opted out of texts');
  else if (customer.smsConsent.status !== 'opted_in') out.push('the customer has not agreed to texts yet');
  return out;
}

/* ---------------------------------------------------------------- Customers */

export function CustomersPage() {
  const [rows, setRows] = useState(null);
  const [search, setSearch] = useState('');
  const [error, setError] = useState(null);
  const load = useCallback((term) => {
    const q = term.trim() ? `?search=${encodeURIComponent(term.trim())}` : '';
    apiList(`/api/customers${q}`, 200).then(setRows, setError);
  }, []);
  useEffect(() => load(''), [load]);
  return html`<section>
    <h1>Customers</h1>
    <p class="lead">Open a customer to see their texts, reply, and record whether they agreed to be texted.</p>
    <form class="row" role="search" onSubmit=${(e) => {
      e.preventDefault();
      load(search);
    }}>
      <label>Find a customer<input type="search" name="search" value=${search} placeholder="Name, email or phone" onInput=${(e) => setSearch(e.target.value)} /></label>
      <button type="submit">Search</button>
    </form>
    <${Alert} error=${error} />
    ${
      rows === null
        ? error
          ? null
          : html`<p class="loading">Loading customers…</p>`
        : rows.length === 0
          ? html`<p class="empty">No customers${search.trim() ? ' match' : ' yet'}.</p>`
          : html`<ul class="plain customer-list">${rows.map((c) => {
              const [tone, label] = CONSENT[c.smsConsent.status] ?? CONSENT.unknown;
              return html`<li class="card" key=${c.id}>
                <${Link} href=${`/app/customers/${encodeURIComponent(c.id)}`}><strong>${c.name}</strong><//>
                ${c.company ? html` <span class="muted">${c.company}</span>` : null}
                <div class="muted small">${[c.phone, c.email].filter(Boolean).join(' · ') || 'No phone or email'}</div>
                <${Badge} tone=${tone}>${label}<//>
              </li>`;
            })}</ul>`
    }
  </section>`;
}

/* ---------------------------------------------------------------- Consent */

function ConsentCard({ customer, onChanged }) {
  const [evidence, setEvidence] = useState('');
  const [history, setHistory] = useState(null);
  const [run, busy, error] = useAction();
  const loadHistory = useCallback(() => {
    api('GET', `/api/customers/${encodeURIComponent(customer.id)}/sms-consent`).then(setHistory, () => setHistory([]));
  }, [customer.id]);
  useEffect(loadHistory, [loadHistory, customer.smsConsent.status]);
  const record = (optedIn) =>
    run(async () => {
      setHistory(
        await api('POST', `/api/customers/${encodeURIComponent(customer.id)}/sms-consent`, {
          optedIn,
          evidence: evidence.trim() || null,
        }),
      );
      setEvidence('');
      await onChanged();
    });
  const [tone, label] = CONSENT[customer.smsConsent.status] ?? CONSENT.unknown;
  return html`<section class="card stack" aria-labelledby="consent-title">
    <h2 id="consent-title">Text consent</h2>
    <p><${Badge} tone=${tone}>${label}<//>
      ${customer.smsConsent.updatedAt ? html` <span class="muted small">since ${formatTime(customer.smsConsent.updatedAt)}, ${SOURCE[customer.smsConsent.source] ?? customer.smsConsent.source}</span>` : null}</p>
    <p class="muted small">Text a customer only after they agreed to it. A customer who texts STOP is opted out at once; START opts them back in.</p>
    <label>How they agreed (kept as evidence)<input name="evidence" maxlength="1000" value=${evidence} placeholder="Signed service agreement, 2 April" onInput=${(e) => setEvidence(e.target.value)} /></label>
    <div class="row">
      <button type="button" disabled=${busy || customer.smsConsent.status === 'opted_in'} onClick=${() => record(true)}>Record opt-in</button>
      <button type="button" class="secondary" disabled=${busy || customer.smsConsent.status === 'opted_out'} onClick=${() => record(false)}>Record opt-out</button>
    </div>
    <${Alert} error=${error} />
    ${
      history && history.length > 0
        ? html`<details><summary>Every change (${history.length})</summary>
            <ul class="plain consent-history">${history.map(
              (c) =>
                html`<li><strong>${c.status === 'opted_in' ? 'Opted in' : 'Opted out'}</strong> · ${formatTime(c.at)} · ${SOURCE[c.source] ?? c.source}${c.evidence ? html`<br /><span class="muted small">${c.evidence}</span>` : null}</li>`,
            )}</ul>
          </details>`
        : null
    }
  </section>`;
}

/* ---------------------------------------------------------------- Conversation */

function Bubble({ m }) {
  const [tone, label] = STATUS[m.status] ?? ['neutral', m.status];
  const when = m.direction === 'inbound' ? m.createdAt : (m.deliveredAt ?? m.sentAt ?? m.createdAt);
  return html`<li class=${`bubble bubble-${m.direction}`} data-status=${m.status}>
    <div class="bubble-meta small">
      ${m.direction === 'inbound' ? 'Customer' : (KIND[m.kind] ?? m.kind)} · ${formatTime(when)}
      ${' '}<${Badge} tone=${tone}>${label}<//>
      ${m.segments > 1 ? html` <span class="muted">${m.segments} parts</span>` : null}
    </div>
    <p class="bubble-body">${m.body}</p>
    ${m.sendAfter && m.status === 'queued' ? html`<div class="muted small">Waits for the end of the quiet hours: ${formatTime(m.sendAfter)}</div>` : null}
    ${m.errorMessage || m.errorCode ? html`<div class="small bubble-error">${m.errorMessage ?? ''}${m.errorCode ? ` (code ${m.errorCode})` : ''}</div>` : null}
  </li>`;
}

function Conversation({ customer, settings }) {
  const [texts, setTexts] = useState(null);
  const [body, setBody] = useState('');
  const [error, setError] = useState(null);
  const [run, busy, sendError] = useAction();
  const end = useRef(null);
  const path = `/api/customers/${encodeURIComponent(customer.id)}/messages`;
  const load = useCallback(async () => {
    try {
      // Newest first from the API; a conversation reads oldest first, the newest at the bottom.
      setTexts((await apiList(path, 300)).reverse());
      setError(null);
    } catch (err) {
      setError(err);
    }
  }, [path]);
  useEffect(() => {
    load();
    // Replies and delivery reports arrive while the page is open.
    const timer = setInterval(load, 5000);
    return () => clearInterval(timer);
  }, [load]);
  const count = texts?.length ?? 0;
  useEffect(() => {
    if (count > 0) end.current?.scrollIntoView({ block: 'nearest' });
  }, [count]);
  const send = (e) => {
    e.preventDefault();
    run(async () => {
      await api('POST', '/api/messages', { customerId: customer.id, body });
      setBody('');
      await load();
    });
  };
  const missing = blockers(settings, customer);
  const parts = body ? segmentsOf(body) : 0;
  return html`<section class="card stack" aria-labelledby="conversation-title">
    <div class="row spread">
      <h2 id="conversation-title">Texts</h2>
      <button type="button" class="secondary" onClick=${load}>Refresh</button>
    </div>
    <${Alert} error=${error} />
    ${
      texts === null
        ? error
          ? null
          : html`<p class="loading">Loading texts…</p>`
        : texts.length === 0
          ? html`<p class="empty">No texts with this customer yet.</p>`
          : html`<ol class="plain thread" aria-label=${`Texts with ${customer.name}`}>${texts.map((m) => html`<${Bubble} key=${m.id} m=${m} />`)}</ol>`
    }
    <div ref=${end}></div>
    ${
      missing.length > 0
        ? html`<div class="alert alert-info" role="status"><strong>A text cannot go to this customer yet:</strong>
            <ul>${missing.map((r) => html`<li>${r}</li>`)}</ul></div>`
        : null
    }
    <form class="stack" onSubmit=${send}>
      <label>Your text to ${customer.firstName}<textarea name="body" rows="3" maxlength="1600" required value=${body} onInput=${(e) => setBody(e.target.value)} placeholder="Mowing tomorrow around 9."></textarea></label>
      <div class="row spread">
        <span class="muted small" aria-live="polite">${body.length} / 1,600 characters${parts > 1 ? `, ${parts} parts` : ''}</span>
        <button type="submit" disabled=${busy || body.trim() === ''}>${busy ? 'Sending…' : 'Send text'}</button>
      </div>
    </form>
    <${SendRefused} error=${sendError} />
  </section>`;
}

export function CustomerPage({ id }) {
  const [customer, setCustomer] = useState(null);
  const [settings, setSettings] = useState(null);
  const [error, setError] = useState(null);
  const load = useCallback(async () => {
    try {
      setCustomer(await api('GET', `/api/customers/${encodeURIComponent(id)}`));
    } catch (err) {
      setError(err);
    }
  }, [id]);
  useEffect(() => {
    load();
    api('GET', '/api/settings').then(setSettings, () => setSettings(null));
  }, [load]);
  if (error) {
    return html`<section><h1>Customer</h1><${Alert} error=${error} /><p><${Link} href="/app/customers">All customers<//></p></section>`;
  }
  if (!customer) return html`<p class="loading">Loading the customer…</p>`;
  return html`<section>
    <p class="small"><${Link} href="/app/customers">← All customers<//></p>
    <h1>${customer.name}</h1>
    <dl class="facts">
      <dt>Phone</dt><dd>${customer.phone ?? '—'}${customer.phone && !customer.phoneE164 ? html` <span class="muted small">(not a valid mobile number)</span>` : null}</dd>
      <dt>Texts go to</dt><dd class="mono">${customer.phoneE164 ?? '—'}</dd>
      <dt>Email</dt><dd>${customer.email ?? '—'}</dd>
      ${customer.address ? html`<dt>Address</dt><dd>${customer.address}</dd>` : null}
    </dl>
    <div class="customer-columns">
      <${Conversation} customer=${customer} settings=${settings} />
      <div class="stack">
        <${ConsentCard} customer=${customer} onChanged=${load} />
        <${CustomerDocuments} customer=${customer} currency=${settings?.currency ?? 'USD'} />
      </div>
    </div>
  </section>`;
}

/* ---------------------------------------------------------------- SMS settings */

const formOf = (s) => ({
  smsEnabled: s.smsEnabled,
  twilioAccountSid: s.twilioAccountSid ?? '',
  twilioAuthToken: '',
  twilioConfigured: s.twilioConfigured,
  smsFrom: s.smsFrom ?? '',
  quiet: s.smsQuietHours !== null,
  quietStart: s.smsQuietHours?.start ?? '21:00',
  quietEnd: s.smsQuietHours?.end ?? '08:00',
  reminderEmail: s.reminderChannels.includes('email'),
  reminderSms: s.reminderChannels.includes('sms'),
  visitReminderHours: s.visitReminderHours === null ? '' : String(s.visitReminderHours),
  country: s.country,
  companyPhone: s.companyPhone,
  timezone: s.timezone,
});

export function SmsSettingsPage({ org }) {
  const [form, setForm] = useState(null);
  const [loadError, setLoadError] = useState(null);
  const [saved, setSaved] = useState(null);
  const [run, busy, error] = useAction();
  const editable = isAdmin(org);
  useEffect(() => {
    api('GET', '/api/settings').then((s) => setForm(formOf(s)), setLoadError);
  }, []);
  if (loadError) return html`<section><h1>Text messages</h1><${Alert} error=${loadError} /></section>`;
  if (!form) return html`<p class="loading">Loading settings…</p>`;
  const set = (k) => (e) => {
    setSaved(null);
    setForm({ ...form, [k]: e.target.type === 'checkbox' ? e.target.checked : e.target.value });
  };
  const orNull = (v) => (v.trim() === '' ? null : v.trim());
  const patch = (body, message) =>
    run(async () => {
      await api('PATCH', '/api/settings', body);
      setForm(formOf(await api('GET', '/api/settings')));
      setSaved(message);
    });
  const save = (e) => {
    e.preventDefault();
    const channels = [...(form.reminderEmail ? ['email'] : []), ...(form.reminderSms ? ['sms'] : [])];
    patch(
      {
        smsEnabled: form.smsEnabled,
        twilioAccountSid: orNull(form.twilioAccountSid),
        // Write-only: an empty field keeps the token that is set.
        ...(form.twilioAuthToken.trim() ? { twilioAuthToken: form.twilioAuthToken.trim() } : {}),
        smsFrom: orNull(form.smsFrom),
        smsQuietHours: form.quiet ? { start: form.quietStart, end: form.quietEnd } : null,
        reminderChannels: channels,
        visitReminderHours: form.visitReminderHours.trim() === '' ? null : Number(form.visitReminderHours),
        country: form.country.trim().toUpperCase(),
      },
      'Text message settings saved.',
    );
  };
  const forget = () => {
    if (!window.confirm('Remove the Twilio auth token? No text can be sent or received until a new one is set.'))
      return;
    patch({ twilioAuthToken: null }, 'The Twilio auth token is removed.');
  };
  const inbound = `${window.location.origin}/api/sms/twilio/${org.id}/inbound`;
  return html`<section>
    <p class="small"><${Link} href="/app/settings">← All settings<//></p>
    <h1>Text messages</h1>
    <p class="lead">Text customers through your own Twilio account: visit reminders, "on my way", invoice links, and their replies. ${editable ? '' : 'Only owners and admins can change these; you can read them.'}</p>
    <${Alert} error=${error} />
    ${saved ? html`<${Alert} kind="info" error=${saved} />` : null}
    <form class="card grid pair" onSubmit=${save}>
      <fieldset disabled=${!editable}>
        <legend>Twilio account</legend>
        <p class="muted small">From Twilio's console (Account → API keys & tokens). The auth token is never shown again: leave it empty to keep the one that is set.</p>
        <label>Account SID<input name="twilioAccountSid" class="mono" autocomplete="off" placeholder="AC…" value=${form.twilioAccountSid} onInput=${set('twilioAccountSid')} /></label>
        <label><span>Auth token <span class="muted" data-testid="token-state">${form.twilioConfigured ? '(set)' : '(not set)'}</span></span><input type="password" name="twilioAuthToken" autocomplete="off" placeholder=${form.twilioConfigured ? 'Set: type a new token to replace it' : '32 letters and digits'} value=${form.twilioAuthToken} onInput=${set('twilioAuthToken')} /></label>
        ${form.twilioConfigured && editable ? html`<div><button type="button" class="secondary" disabled=${busy} onClick=${forget}>Remove the auth token</button></div>` : null}
        <label><span>Send from <span class="muted">a number (+15551234567) or a Messaging Service SID (MG…)</span></span><input name="smsFrom" class="mono" autocomplete="off" placeholder="+15551234567" value=${form.smsFrom} onInput=${set('smsFrom')} /></label>
        <label class="check"><input type="checkbox" name="smsEnabled" checked=${form.smsEnabled} onChange=${set('smsEnabled')} /> Send text messages</label>
      </fieldset>
      <fieldset disabled=${!editable}>
        <legend>When texts go</legend>
        <label class="check"><input type="checkbox" name="quiet" checked=${form.quiet} onChange=${set('quiet')} /> Hold automatic texts during quiet hours</label>
        <div class="row">
          <label>Quiet from<input type="time" name="quietStart" disabled=${!form.quiet} required=${form.quiet} value=${form.quietStart} onInput=${set('quietStart')} /></label>
          <label>until<input type="time" name="quietEnd" disabled=${!form.quiet} required=${form.quiet} value=${form.quietEnd} onInput=${set('quietEnd')} /></label>
        </div>
        <p class="muted small">In ${form.timezone} time. Reminders and invoice links made in the quiet hours wait for their end; your own texts and "on my way" go at once.</p>
        <fieldset class="inner">
          <legend>Visit reminders go by</legend>
          <label class="check"><input type="checkbox" name="reminderEmail" checked=${form.reminderEmail} onChange=${set('reminderEmail')} /> Email</label>
          <label class="check"><input type="checkbox" name="reminderSms" checked=${form.reminderSms} onChange=${set('reminderSms')} /> Text message</label>
        </fieldset>
        <label><span>Remind this many hours before a visit <span class="muted">empty = no reminders</span></span><input type="number" name="visitReminderHours" min="1" max="168" step="1" value=${form.visitReminderHours} onInput=${set('visitReminderHours')} /></label>
        <label><span>Country <span class="muted">for phone numbers written without +</span></span><input name="country" maxlength="2" required pattern="[A-Za-z]{2}" title="Two letters, e.g. US" value=${form.country} onInput=${set('country')} /></label>
      </fieldset>
      <div class="full card-note">
        <h2>In Twilio's console</h2>
        <p class="small">On your number's page, under Messaging → "A message comes in", choose Webhook, HTTP POST, and paste:</p>
        <p><code class="wrap" data-testid="inbound-url">${inbound}</code></p>
        <p class="muted small">Delivery reports need nothing: each text tells Twilio where to report. A customer who texts HELP is answered with your company name and phone (${form.companyPhone ?? 'not set: add it in Settings'}).</p>
      </div>
      ${editable ? html`<div class="full"><button type="submit" disabled=${busy}>${busy ? 'Saving…' : 'Save text message settings'}</button></div>` : null}
    </form>
  </section>`;
}
