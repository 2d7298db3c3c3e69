/** Shared pieces of the console: the `html` tag, messages, the once-shown secret, formatting. */
import htm from 'htm';
import { h } from 'preact';
import { useState } from 'preact/hooks';

export const html = htm.bind(h);

/** The console's path, `/app/` for its home. */
export function currentPath() {
  const p = location.pathname.replace(/\/+$/, '');
  return p === '' || p === '/app' ? '/app/' : p;
}

export function navigate(path, replace = false) {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  window.dispatchEvent(new Event('console:navigate'));
}

/** An in-console link: the address changes without reloading the page. */
export function Link({ href, children, ...rest }) {
  const click = (e) => {
    if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    navigate(href);
  };
  const current = currentPath() === href || (href !== '/app/' && currentPath().startsWith(`${href}/`));
  return html`<a href=${href} onClick=${click} aria-current=${current ? 'page' : undefined} ...${rest}>${children}</a>`;
}

/** A message read out by screen readers as it appears. */
export function Alert({ error, kind = 'error' }) {
  if (!error) return null;
  const text = typeof error === 'string' ? error : error.message;
  return html`<div class=${`alert alert-${kind}`} role=${kind === 'error' ? 'alert' : 'status'}>${text}</div>`;
}

/** Where a page the plan or the role does not allow explains why, instead of failing. */
export function Refusal({ error, what }) {
  if (error?.code === 'PLAN_REQUIRED') {
    return html`<section class="card gate" aria-labelledby="gate-title">
      <h2 id="gate-title">${what} are part of the Business plan</h2>
      <p>${error.message}.</p>
      <p>
        On the Business plan you can send signed webhooks to your own systems (Zapier, your accounting
        software, a custom app) and create API keys for integrations. Ask the person who manages your
        subscription to move this organization to the Business plan; everything else keeps working as it is.
      </p>
    </section>`;
  }
  if (error?.status === 403) {
    return html`<section class="card gate" aria-labelledby="gate-title">
      <h2 id="gate-title">Only owners and admins can manage ${what.toLowerCase()}</h2>
      <p>Your role in this organization is <strong>member</strong>. Members can see the dashboard and the settings but
      cannot change ${what.toLowerCase()}. Ask an owner or admin of the organization if you need this.</p>
      <p class="muted">(${error.message})</p>
    </section>`;
  }
  return html`<${Alert} error=${error} />`;
}

/** A secret the API shows only once: read-only field, copy button, and a warning. */
export function SecretOnce({ label, value, onDone, lost = 'If you lose it, rotate it to get a new one.' }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied(true);
    } catch {
      const input = document.getElementById('secret-once');
      input?.select();
      setCopied(false);
    }
  };
  return html`<section class="card secret" aria-labelledby="secret-title">
    <h3 id="secret-title">${label}</h3>
    <p><strong>Copy it now: it is shown only once.</strong> ${lost}</p>
    <div class="row">
      <input id="secret-once" class="mono" readonly value=${value} aria-label=${label} onFocus=${(e) => e.target.select()} />
      <button type="button" onClick=${copy}>${copied ? 'Copied' : 'Copy'}</button>
    </div>
    ${onDone ? html`<p><button type="button" class="secondary" onClick=${onDone}>I have saved it</button></p>` : null}
  </section>`;
}

export function formatTime(iso) {
  if (!iso) return '—';
  return new Date(iso).toLocaleString();
}

export function formatMoney(amount, currency = 'USD') {
  if (amount === null || amount === undefined) return '—';
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(amount);
  } catch {
    return String(amount);
  }
}

export const STATUS_LABEL = { pending: 'Pending', failed: 'Retrying', succeeded: 'Succeeded', dead: 'Dead' };

export function Badge({ tone, children }) {
  return html`<span class=${`badge badge-${tone}`}>${children}</span>`;
}

/** Runs an async action with a busy flag and an error slot; returns [run, busy, error, setError]. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const run = async (fn) => {
    setBusy(true);
    setError(null);
    try {
      return await fn();
    } catch (err) {
      setError(err);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return [run, busy, error, setError];
}
