/** Recurring schedules: what repeats, for whom, and the next visits (skip one, pause, resume, end). */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, apiList } from './api.js';
import { Alert, Badge, formatMoney, html, useAction } from './ui.js';

const DAYS = {
  MO: 'Monday',
  TU: 'Tuesday',
  WE: 'Wednesday',
  TH: 'Thursday',
  FR: 'Friday',
  SA: 'Saturday',
  SU: 'Sunday',
};
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const UNIT = { DAILY: ['day', 'days'], WEEKLY: ['week', 'weeks'], MONTHLY: ['month', 'months'] };

/** A list in words: "Tuesday and Friday", "Apr, May and Jun". */
const words = (items) => (items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`);

/**
 * The schedule's RRULE in words ("Every week on Tuesday, Apr to Oct"). Only the parts the API
 * accepts (FREQ, INTERVAL, BYDAY, BYMONTHDAY, BYMONTH, COUNT, UNTIL); anything else is shown as written.
 */
export function ruleInWords(rrule) {
  const parts = Object.fromEntries(
    rrule
      .replace(/^RRULE:/i, '')
      .split(';')
      .map((p) => p.split('='))
      .map(([k, v]) => [k?.toUpperCase(), v ?? '']),
  );
  const unit = UNIT[parts.FREQ];
  if (!unit) return rrule;
  const every = Number(parts.INTERVAL ?? 1);
  let text = every > 1 ? `Every ${every} ${unit[1]}` : `Every ${unit[0]}`;
  if (parts.BYDAY) {
    const days = parts.BYDAY.split(',').map((d) => {
      const m = /^([+-]?\d+)?(MO|TU|WE|TH|FR|SA|SU)$/.exec(d);
      if (!m) return d;
      return m[1] ? `the ${ordinal(Number(m[1]))} ${DAYS[m[2]]}` : DAYS[m[2]];
    });
    text += ` on ${words(days)}`;
  }
  if (parts.BYMONTHDAY) text += ` on day ${words(parts.BYMONTHDAY.split(','))}`;
  if (parts.BYMONTH) {
    const months = parts.BYMONTH.split(',').map((m) => MONTHS[Number(m) - 1] ?? m);
    text += `, in ${words(months)}`;
  }
  if (parts.COUNT) text += `, ${parts.COUNT} times`;
  if (parts.UNTIL) text += `, until ${parts.UNTIL.slice(0, 4)}-${parts.UNTIL.slice(4, 6)}-${parts.UNTIL.slice(6, 8)}`;
  return text;
}

function ordinal(n) {
  if (n === -1) return 'last';
  const abs = Math.abs(n);
  const suffix = abs % 100 >= 11 && abs % 100 <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' }[abs % 10] ?? 'th');
  return n < 0 ? `${abs}${suffix} last` : `${abs}${suffix}`;
}

/** A calendar date (YYYY-MM-DD) with its weekday, never shifted by the browser's timezone. */
function visitDate(date) {
  return new Intl.DateTimeFormat(undefined, {
    weekday: 'short',
    month: 'short',
    day: 'numeric',
    year: 'numeric',
    timeZone: 'UTC',
  }).format(new Date(`${date}T00:00:00Z`));
}

const STATUS_TONE = { active: 'ok', paused: 'warn', ended: 'neutral' };
const STATUS_LABEL = { active: 'Active', paused: 'Paused', ended: 'Ended' };
const BILLING_LABEL = {
  per_visit: 'Each visit',
  batch: 'Monthly, all visits',
  installments: 'Installments',
  none: 'Not billed here',
};

const customerLabel = (c) => c?.name || '—';

/** A schedule's changes answer how many visits they touched: say it in a sentence. */
function touched(what, visits) {
  if (!visits) return what;
  const bits = [
    visits.removed ? `${visits.removed} visit${visits.removed === 1 ? '' : 's'} canceled` : null,
    visits.added ? `${visits.added} visit${visits.added === 1 ? '' : 's'} made` : null,
  ].filter(Boolean);
  return bits.length ? `${what}: ${bits.join(', ')}.` : `${what}.`;
}

function ScheduleDetail({ id, onChanged }) {
  const [detail, setDetail] = useState(null);
  const [notice, setNotice] = useState(null);
  const [run, busy, error] = useAction();
  const load = useCallback(async () => {
    setDetail(await api('GET', `/api/jobs/schedules/${encodeURIComponent(id)}`));
  }, [id]);
  useEffect(() => {
    run(load);
  }, [load]);

  const act = (path, body, message) =>
    run(async () => {
      const result = await api('POST', `/api/jobs/schedules/${encodeURIComponent(id)}/${path}`, body);
      setNotice(typeof message === 'function' ? message(result) : message);
      await load();
      await onChanged();
    });
  const skip = (date) => act('skip', { date }, `The visit of ${visitDate(date)} is skipped.`);
  const pause = () => act('pause', {}, (r) => touched('Paused', r.visits));
  const resume = () => act('resume', {}, (r) => touched('Resumed', r.visits));
  const end = () => {
    if (!window.confirm(`End "${detail.title}" today? Its later visits are canceled; this cannot be undone.`)) return;
    act('end', {}, (r) => touched('Ended', r.visits));
  };

  if (!detail)
    return html`<section class="card" aria-label="Schedule"><${Alert} error=${error} /><p class="loading">Loading the schedule…</p></section>`;
  const skipped = new Set(detail.skippedDates);
  return html`<section class="card stack" aria-labelledby="schedule-title">
    <div class="row spread">
      <h2 id="schedule-title">${detail.title}</h2>
      <${Badge} tone=${STATUS_TONE[detail.status] ?? 'neutral'}>${STATUS_LABEL[detail.status] ?? detail.status}<//>
    </div>
    <p class="muted">${ruleInWords(detail.rrule)}${detail.startTime ? ` at ${detail.startTime}` : ''} · from ${detail.startDate}${detail.endDate ? ` to ${detail.endDate}` : ''}</p>
    <${Alert} error=${error} />
    ${notice ? html`<${Alert} kind="info" error=${notice} />` : null}
    <div class="row">
      ${detail.status === 'active' ? html`<button type="button" class="secondary" disabled=${busy} onClick=${pause}>Pause</button>` : null}
      ${detail.status === 'paused' ? html`<button type="button" disabled=${busy} onClick=${resume}>Resume</button>` : null}
      ${detail.status === 'active' || detail.status === 'paused' ? html`<button type="button" class="danger" disabled=${busy} onClick=${end}>End schedule</button>` : null}
    </div>
    <h3>Next visits</h3>
    ${
      detail.nextOccurrences.length === 0
        ? html`<p class="empty">No visits to come.</p>`
        : html`<table class="middle">
          <caption class="sr-only">The next visits of ${detail.title}</caption>
          <thead><tr><th scope="col">Date</th><th scope="col">Time</th><th scope="col"><span class="sr-only">State or action</span></th></tr></thead>
          <tbody>${detail.nextOccurrences.map(
            (date) => html`<tr>
              <td>${visitDate(date)}</td><td>${detail.startTime ?? '—'}</td>
              <td>${
                skipped.has(date)
                  ? html`<${Badge} tone="neutral">Skipped<//>`
                  : detail.status === 'active'
                    ? html`<button type="button" class="secondary" disabled=${busy} onClick=${() => skip(date)} aria-label=${`Skip ${visitDate(date)}`}>Skip</button>`
                    : null
              }</td>
            </tr>`,
          )}</tbody>
        </table>`
    }
  </section>`;
}

export function SchedulesPage() {
  const [schedules, setSchedules] = useState(null);
  const [customers, setCustomers] = useState(new Map());
  const [currency, setCurrency] = useState('USD');
  const [loadError, setLoadError] = useState(null);
  const [open, setOpen] = useState(null);
  const load = useCallback(async () => {
    try {
      const [rows, people, settings] = await Promise.all([
        apiList('/api/jobs/schedules'),
        apiList('/api/customers', 1000),
        api('GET', '/api/settings'),
      ]);
      setCurrency(settings.currency);
      setSchedules(rows);
      setCustomers(new Map(people.map((c) => [c.id, c])));
    } catch (err) {
      setLoadError(err);
    }
  }, []);
  useEffect(() => {
    load();
  }, [load]);
  if (loadError) return html`<section><h1>Schedules</h1><${Alert} error=${loadError} /></section>`;
  return html`<section class="stack">
    <h1>Schedules</h1>
    <p class="lead">Recurring visits: each schedule fills the calendar ahead with its visits. Open one to see its next visits, skip one, pause or end it.</p>
    ${
      schedules === null
        ? html`<p class="loading">Loading schedules…</p>`
        : schedules.length === 0
          ? html`<p class="empty">No schedules yet. Create one with <code>POST /api/jobs/schedules</code>, or sign a contract that has one.</p>`
          : html`<table>
            <caption>Recurring schedules</caption>
            <thead><tr><th scope="col">Schedule</th><th scope="col">Customer</th><th scope="col">Repeats</th><th scope="col" class="num">Per visit</th><th scope="col">Billed</th><th scope="col">Status</th></tr></thead>
            <tbody>${schedules.map(
              (s) => html`<tr aria-current=${open === s.id ? 'true' : undefined}>
                <td><button type="button" class="link" aria-expanded=${open === s.id} onClick=${() => setOpen(open === s.id ? null : s.id)}>${s.title}</button></td>
                <td>${customerLabel(customers.get(s.customerId))}</td>
                <td>${ruleInWords(s.rrule)}${s.startTime ? ` at ${s.startTime}` : ''}</td>
                <td class="num">${formatMoney(s.total, currency)}</td>
                <td>${BILLING_LABEL[s.billing?.mode] ?? s.billing?.mode}</td>
                <td><${Badge} tone=${STATUS_TONE[s.status] ?? 'neutral'}>${STATUS_LABEL[s.status] ?? s.status}<//></td>
              </tr>`,
            )}</tbody>
          </table>`
    }
    ${open ? html`<${ScheduleDetail} key=${open} id=${open} onChanged=${load} />` : null}
  </section>`;
}
