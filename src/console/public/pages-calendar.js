/**
 * The week's visits by crew (issue 48): one row per crew and one for the visits no crew has,
 * a column per day (Monday to Sunday), each day's visits in route order (the order
 * `POST /api/jobs/route/apply` stored, then start time, as `/api/jobs/route` reads it).
 * Skipped and canceled visits stay in place, struck through and labelled. On a phone the
 * rows become cards and each day a line of its own. Reads `/api/jobs` (the week, with
 * `expand=customer,property`) and `/api/crew-tracking/crews`.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, apiList } from './api.js';
import { Alert, Badge, html, navigate } from './ui.js';

const DAY_MS = 86_400_000;
const NO_CREW = '';

/** A date (YYYY-MM-DD) `n` days after `date`. */
export const addDays = (date, n) => new Date(Date.parse(`${date}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);

/** Today in `timeZone` (the organization's), as YYYY-MM-DD. */
function todayIn(timeZone) {
  try {
    return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(
      new Date(),
    );
  } catch {
    return new Date().toISOString().slice(0, 10);
  }
}

/** The Monday of the week holding `date`. */
export function mondayOf(date) {
  const weekday = new Date(`${date}T00:00:00Z`).getUTCDay(); // 0 = Sunday
  return addDays(date, -((weekday + 6) % 7));
}

const fmt = (date, options) =>
  new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', ...options }).format(new Date(`${date}T00:00:00Z`));
const dayLabel = (date) => fmt(date, { weekday: 'short', month: 'short', day: 'numeric' });
const weekLabel = (monday) =>
  `${fmt(monday, { month: 'short', day: 'numeric' })} – ${fmt(addDays(monday, 6), { month: 'short', day: 'numeric', year: 'numeric' })}`;

/**
 * Skipped: a canceled visit of a schedule that keeps its occurrence (skipped, or canceled by
 * hand: the schedule carries on without it). Canceled: any other canceled job (a one-off, or
 * a visit a schedule's pause, end or edit removed).
 */
export function markOf(job) {
  if (job.status !== 'canceled') return null;
  return job.scheduleId && job.occurrenceDate ? 'skipped' : 'canceled';
}

/** Route order: the stored routeOrder first, then start time, then the time it was made. */
export function byRoute(a, b) {
  const ra = a.routeOrder ?? Number.MAX_SAFE_INTEGER;
  const rb = b.routeOrder ?? Number.MAX_SAFE_INTEGER;
  if (ra !== rb) return ra - rb;
  const ta = a.startTime ?? '99:99';
  const tb = b.startTime ?? '99:99';
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0;
}

const weekFromUrl = () => {
  const w = new URLSearchParams(location.search).get('week');
  return w && /^\d{4}-\d{2}-\d{2}$/.test(w) && !Number.isNaN(Date.parse(`${w}T00:00:00Z`)) ? mondayOf(w) : null;
};

function Visit({ job, stop }) {
  const mark = markOf(job);
  const who = job.customer?.name ?? job.customerId;
  const where = job.property?.address || job.customer?.address || '';
  const what = job.services.join(', ');
  return html`<li class=${`visit${mark ? ` visit-${mark}` : ''}`} data-status=${job.status}>
    <span class="visit-order" aria-hidden="true">${mark ? '–' : stop}</span>
    <span class="visit-body">
      <span class="visit-time">${job.startTime ?? 'Any time'}</span>
      ${mark ? html` <${Badge} tone=${mark === 'skipped' ? 'warn' : 'bad'}>${mark === 'skipped' ? 'Skipped' : 'Canceled'}<//>` : null}
      ${job.status === 'completed' ? html` <${Badge} tone="ok">Done<//>` : null}
      ${job.status === 'in_progress' ? html` <${Badge} tone="neutral">Started<//>` : null}
      <span class="visit-who">${who}</span>
      ${where ? html`<span class="visit-where">${where}</span>` : null}
      ${what ? html`<span class="visit-what muted">${what}</span>` : null}
    </span>
  </li>`;
}

function DayCell({ date, jobs, crewName, today }) {
  let stop = 0;
  const label = `${crewName}, ${dayLabel(date)}`;
  return html`<div class=${`cal-cell${jobs.length === 0 ? ' cal-empty' : ''}${date === today ? ' cal-today' : ''}`} role="cell" aria-label=${label}>
    <span class="cal-cell-day">${dayLabel(date)}</span>
    ${
      jobs.length === 0
        ? html`<span class="muted small cal-none">—</span>`
        : html`<ol class="visits">${jobs.map((j) => html`<${Visit} key=${j.id} job=${j} stop=${markOf(j) ? 0 : ++stop} />`)}</ol>`
    }
  </div>`;
}

export function CalendarPage({ org }) {
  const today = todayIn(org?.timezone ?? 'UTC');
  const [monday, setMonday] = useState(() => weekFromUrl() ?? mondayOf(today));
  const [jobs, setJobs] = useState(null);
  const [crews, setCrews] = useState([]);
  const [error, setError] = useState(null);
  const sunday = addDays(monday, 6);
  const days = Array.from({ length: 7 }, (_, i) => addDays(monday, i));

  useEffect(() => {
    const onNav = () => {
      const w = weekFromUrl();
      if (w) setMonday(w);
    };
    window.addEventListener('popstate', onNav);
    return () => window.removeEventListener('popstate', onNav);
  }, []);

  useEffect(() => {
    let live = true;
    setJobs(null);
    setError(null);
    Promise.all([
      apiList(`/api/jobs?startDate=${monday}&endDate=${sunday}&expand=customer,property`, 2000),
      api('GET', '/api/crew-tracking/crews?limit=100').catch(() => []),
    ]).then(
      ([list, crewList]) => {
        if (!live) return;
        setJobs(list.filter((j) => j.status !== 'draft'));
        setCrews([...crewList].sort((a, b) => a.name.localeCompare(b.name)));
      },
      (err) => live && setError(err),
    );
    return () => {
      live = false;
    };
  }, [monday, sunday]);

  const go = (to) => {
    setMonday(to);
    navigate(`/app/calendar?week=${to}`);
  };

  // Rows: every crew of the organization by name, crews named only by a job (deleted since), then no crew.
  const names = new Map(crews.map((c) => [c.id, c.name]));
  const rowIds = crews.map((c) => c.id);
  for (const j of jobs ?? []) {
    if (j.crewId && !names.has(j.crewId)) {
      rowIds.push(j.crewId);
      names.set(j.crewId, j.crewId);
    }
  }
  rowIds.push(NO_CREW);
  names.set(NO_CREW, 'No crew');
  const cells = new Map();
  for (const j of jobs ?? []) {
    const key = `${j.crewId ?? NO_CREW}|${j.scheduledDate}`;
    if (!cells.has(key)) cells.set(key, []);
    cells.get(key).push(j);
  }
  for (const list of cells.values()) list.sort(byRoute);
  const countOf = (id) =>
    days.reduce((n, d) => n + (cells.get(`${id}|${d}`)?.filter((j) => !markOf(j)).length ?? 0), 0);
  const active = (jobs ?? []).filter((j) => !markOf(j)).length;

  return html`<section class="calendar">
    <h1>Calendar</h1>
    <div class="cal-nav">
      <button type="button" class="secondary" onClick=${() => go(addDays(monday, -7))} aria-label="Previous week">‹ Previous</button>
      <h2 class="cal-week" aria-live="polite">Week of ${weekLabel(monday)}</h2>
      <button type="button" class="secondary" onClick=${() => go(addDays(monday, 7))} aria-label="Next week">Next ›</button>
      ${monday === mondayOf(today) ? null : html`<button type="button" class="secondary" onClick=${() => go(mondayOf(today))}>This week</button>`}
    </div>
    <p class="muted small">Each day's visits in route order. <span class="legend legend-skipped">Skipped</span> and <span class="legend legend-canceled">canceled</span> visits are struck through.</p>
    <${Alert} error=${error} />
    ${
      jobs === null
        ? error
          ? null
          : html`<p>Loading…</p>`
        : html`<p class="muted">${active === 1 ? '1 visit' : `${active} visits`} this week.</p>
          <div class="cal-grid" role="table" aria-label=${`Visits by crew, week of ${weekLabel(monday)}`}>
            <div class="cal-row cal-head" role="row">
              <div class="cal-crew" role="columnheader">Crew</div>
              ${days.map((d) => html`<div class=${`cal-day${d === today ? ' cal-today' : ''}`} role="columnheader">${dayLabel(d)}</div>`)}
            </div>
            ${rowIds.map((id) => {
              const n = countOf(id);
              return html`<div class="cal-row" role="row" key=${id || 'none'}>
                <div class="cal-crew" role="rowheader"><strong>${names.get(id)}</strong> <span class="muted small cal-count">${n === 1 ? '1 visit' : `${n} visits`}</span></div>
                ${days.map((d) => html`<${DayCell} date=${d} jobs=${cells.get(`${id}|${d}`) ?? []} crewName=${names.get(id)} today=${today} />`)}
              </div>`;
            })}
          </div>`
    }
  </section>`;
}
