/** The console: session, organization, navigation and the router. */
import { render } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, whenSessionExpires } from './api.js';
import { ApiKeysPage, DashboardPage, ExportPage, SettingsPage } from './pages-account.js';
import {
  CreateOrganizationPage,
  ForgotPasswordPage,
  InvitationPage,
  ResetPasswordPage,
  SignInPage,
  SignUpPage,
} from './pages-auth.js';
import { BooksPage } from './pages-books.js';
import { CalendarPage } from './pages-calendar.js';
import { CustomerPage, CustomersPage, SmsSettingsPage } from './pages-messages.js';
import { RequestsPage } from './pages-requests.js';
import { SchedulesPage } from './pages-schedules.js';
import { EndpointPage, WebhooksPage } from './pages-webhooks.js';
import { Alert, currentPath, html, Link, navigate } from './ui.js';

const PUBLIC = new Set(['/app/sign-in', '/app/sign-up', '/app/forgot-password', '/app/reset-password']);
const INVITATION = /^\/app\/invitations\/([^/]+)$/;

const NAV = [
  ['/app/', 'Dashboard'],
  ['/app/customers', 'Customers'],
  ['/app/requests', 'Requests'],
  ['/app/calendar', 'Calendar'],
  ['/app/schedules', 'Schedules'],
  ['/app/webhooks', 'Webhooks'],
  ['/app/api-keys', 'API keys'],
  ['/app/export', 'Export'],
  ['/app/books', 'Books'],
  ['/app/settings', 'Settings'],
];

function Shell({ session, onSwitch, onSignOut, children }) {
  const active = session.orgs.find((o) => o.active);
  const [error, setError] = useState(null);
  const change = async (e) => {
    const id = e.target.value;
    if (id === '__new') {
      navigate('/app/organizations/new');
      return;
    }
    try {
      await onSwitch(id);
    } catch (err) {
      setError(err);
    }
  };
  return html`<div class="layout">
    <header class="topbar">
      <a class="brand" href="/app/" onClick=${(e) => {
        e.preventDefault();
        navigate('/app/');
      }}>Field Service Console</a>
      <label class="org-switch">
        <span>Organization</span>
        <select value=${active?.id ?? ''} onChange=${change}>
          ${active ? null : html`<option value="">Choose…</option>`}
          ${session.orgs.map((o) => html`<option value=${o.id}>${o.name}</option>`)}
          <option value="__new">+ New organization…</option>
        </select>
      </label>
      <span class="who">${session.user.name}${active ? html` · <span class="muted">${active.role}, ${active.plan} plan</span>` : null}</span>
      <button type="button" class="secondary" onClick=${onSignOut}>Sign out</button>
    </header>
    <nav aria-label="Main">
      <ul>${NAV.map(([href, label]) => html`<li><${Link} href=${href}>${label}<//></li>`)}</ul>
    </nav>
    <main id="main" tabindex="-1">
      <${Alert} error=${error} />
      ${children}
    </main>
  </div>`;
}

function page(path, org) {
  const m = /^\/app\/webhooks\/([^/]+)$/.exec(path);
  if (m) return html`<${EndpointPage} id=${decodeURIComponent(m[1])} org=${org} />`;
  const customer = /^\/app\/customers\/([^/]+)$/.exec(path);
  if (customer) return html`<${CustomerPage} id=${decodeURIComponent(customer[1])} org=${org} />`;
  switch (path) {
    case '/app/':
    case '/app/dashboard':
      return html`<${DashboardPage} org=${org} />`;
    case '/app/requests':
      return html`<${RequestsPage} />`;
    case '/app/calendar':
      return html`<${CalendarPage} org=${org} />`;
    case '/app/schedules':
      return html`<${SchedulesPage} />`;
    case '/app/webhooks':
      return html`<${WebhooksPage} org=${org} />`;
    case '/app/api-keys':
      return html`<${ApiKeysPage} org=${org} />`;
    case '/app/export':
      return html`<${ExportPage} org=${org} />`;
    case '/app/books':
      return html`<${BooksPage} org=${org} />`;
    case '/app/settings':
      return html`<${SettingsPage} org=${org} />`;
    case '/app/customers':
      return html`<${CustomersPage} />`;
    case '/app/settings/texts':
      return html`<${SmsSettingsPage} org=${org} />`;
    default:
      return html`<section><h1>Page not found</h1><p>There is no console page at ${path}. <${Link} href="/app/">Go to the dashboard<//>.</p></section>`;
  }
}

function App() {
  const [path, setPath] = useState(currentPath());
  const [session, setSession] = useState({ status: 'loading' });
  const [notice, setNotice] = useState(null);

  useEffect(() => {
    const onNav = () => setPath(currentPath());
    window.addEventListener('popstate', onNav);
    window.addEventListener('console:navigate', onNav);
    return () => {
      window.removeEventListener('popstate', onNav);
      window.removeEventListener('console:navigate', onNav);
    };
  }, []);

  const load = useCallback(async () => {
    try {
      const s = await api('GET', '/api/auth/get-session', undefined, { quiet401: true });
      const orgs = await api('GET', '/api/organizations');
      setSession({ status: 'ready', user: s.user, orgs });
    } catch (err) {
      if (err.status === 401) setSession({ status: 'signed-out' });
      else setSession({ status: 'error', error: err });
    }
  }, []);

  useEffect(() => {
    whenSessionExpires(() => {
      setNotice('Your session has expired. Sign in again to continue.');
      setSession({ status: 'signed-out' });
    });
    load();
  }, [load]);

  // Signed out on a page that needs a session: to the sign-in page (and back here after).
  useEffect(() => {
    if (session.status === 'signed-out' && !PUBLIC.has(path)) {
      const next = path === '/app/' ? '' : `?next=${encodeURIComponent(path)}`;
      navigate(`/app/sign-in${next}`, true);
    }
  }, [session.status, path]);

  // After an in-console navigation, focus moves to the new page's content (screen readers announce it).
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    document.getElementById('main')?.focus({ preventScroll: true });
  }, [path]);

  useEffect(() => {
    const titles = {
      '/app/sign-in': 'Sign in',
      '/app/sign-up': 'Sign up',
      '/app/forgot-password': 'Reset your password',
      '/app/reset-password': 'Choose a new password',
    };
    document.title = `${titles[path] ?? 'Console'} · Field Service`;
  }, [path]);

  const signedIn = async (message) => {
    setNotice(message ?? null);
    await load();
    const next = new URLSearchParams(location.search).get('next');
    navigate(next?.startsWith('/app/') ? next : '/app/', true);
  };

  if (session.status === 'loading') return html`<p class="loading">Loading the console…</p>`;
  if (session.status === 'error') {
    return html`<main class="narrow"><h1>The console could not start</h1><${Alert} error=${session.error} />
      <button type="button" onClick=${() => {
        setSession({ status: 'loading' });
        load();
      }}>Try again</button></main>`;
  }
  if (session.status === 'signed-out' || PUBLIC.has(path)) {
    if (path === '/app/sign-up') return html`<${SignUpPage} onDone=${() => signedIn()} />`;
    if (path === '/app/forgot-password') return html`<${ForgotPasswordPage} />`;
    if (path === '/app/reset-password') {
      return html`<${ResetPasswordPage} onDone=${(message) => {
        setNotice(message);
        setSession({ status: 'signed-out' });
        navigate('/app/sign-in', true);
      }} />`;
    }
    return html`<${SignInPage} notice=${notice} onDone=${() => signedIn()} />`;
  }

  const active = session.orgs.find((o) => o.active);
  const switchTo = async (id) => {
    await api('POST', `/api/organizations/${encodeURIComponent(id)}/activate`);
    await load();
  };
  const signOut = async () => {
    try {
      await api('POST', '/api/auth/sign-out', undefined, { quiet401: true });
    } catch {
      // Signed out either way: the cookie is gone or was already invalid.
    }
    setNotice('You are signed out.');
    setSession({ status: 'signed-out' });
    navigate('/app/sign-in', true);
  };
  const created = async () => {
    await load();
    navigate('/app/', true);
  };

  let body;
  const invitation = INVITATION.exec(path);
  if (invitation) {
    // Before the organization check: an invitee may have no organization of their own yet.
    body = html`<${InvitationPage} id=${decodeURIComponent(invitation[1])} user=${session.user} onAccepted=${async () => {
      await load();
      navigate('/app/', true);
    }} />`;
  } else if (path === '/app/organizations/new' || !active) {
    body = html`<${CreateOrganizationPage} orgs=${session.orgs} onCreated=${created} onPick=${async (id) => {
      await switchTo(id);
      navigate('/app/', true);
    }} />`;
  } else {
    body = html`<div key=${active.id}>${page(path, active)}</div>`;
  }
  return html`<${Shell} session=${session} onSwitch=${switchTo} onSignOut=${signOut}>${body}<//>`;
}

render(html`<${App} />`, document.getElementById('root'));
