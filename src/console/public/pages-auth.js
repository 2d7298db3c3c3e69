/** Sign in, sign up, and creating (or picking) an organization. */
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { Alert, html, Link, useAction } from './ui.js';

/** The API refuses sign-in from an origin other than its BASE_URL (a cross-site request guard). */
const originRefused = (err) => err.status === 403 && /Origin/.test(err.message);
const originMessage = () =>
  `Signing in from ${location.origin} is refused: open the console at the server's configured address (BASE_URL).`;

function signInMessage(err) {
  if (err.status === 401) return 'Wrong email or password.';
  if (err.status === 400) return 'Enter a valid email address and your password.';
  if (originRefused(err)) return originMessage();
  return err.message;
}

export function SignInPage({ notice, onDone }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [run, busy, error] = useAction();
  const submit = (e) => {
    e.preventDefault();
    run(async () => {
      try {
        await api('POST', '/api/auth/sign-in/email', { email, password }, { quiet401: true });
      } catch (err) {
        err.message = signInMessage(err);
        throw err;
      }
      await onDone();
    });
  };
  return html`<main class="narrow" id="main" tabindex="-1">
    <h1>Sign in</h1>
    ${notice ? html`<${Alert} kind="info" error=${notice} />` : null}
    <${Alert} error=${error} />
    <form onSubmit=${submit} class="stack">
      <label>Email<input type="email" name="email" autocomplete="username" required value=${email} onInput=${(e) => setEmail(e.target.value)} /></label>
      <label>Password<input type="password" name="password" autocomplete="current-password" required value=${password} onInput=${(e) => setPassword(e.target.value)} /></label>
      <button type="submit" disabled=${busy}>${busy ? 'Signing in…' : 'Sign in'}</button>
    </form>
    <p><${Link} href="/app/forgot-password">Forgot your password?<//></p>
    <p>New here? <${Link} href=${`/app/sign-up${location.search}`}>Create an account<//></p>
  </main>`;
}

export function SignUpPage({ onDone }) {
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [run, busy, error] = useAction();
  const submit = (e) => {
    e.preventDefault();
    run(async () => {
      try {
        await api('POST', '/api/auth/sign-up/email', { name, email, password }, { quiet401: true });
      } catch (err) {
        if (err.status === 400 && password.length < 8) err.message = 'The password needs at least 8 characters.';
        if (originRefused(err)) err.message = originMessage();
        throw err;
      }
      await onDone();
    });
  };
  return html`<main class="narrow" id="main" tabindex="-1">
    <h1>Create your account</h1>
    <${Alert} error=${error} />
    <form onSubmit=${submit} class="stack">
      <label>Your name<input name="name" autocomplete="name" required value=${name} onInput=${(e) => setName(e.target.value)} /></label>
      <label>Email<input type="email" name="email" autocomplete="username" required value=${email} onInput=${(e) => setEmail(e.target.value)} /></label>
      <label><span>Password <span class="muted">(at least 8 characters)</span></span><input type="password" name="password" autocomplete="new-password" minlength="8" required value=${password} onInput=${(e) => setPassword(e.target.value)} /></label>
      <button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Sign up'}</button>
    </form>
    <p>Already have an account? <${Link} href=${`/app/sign-in${location.search}`}>Sign in<//></p>
  </main>`;
}

const guessTimezone = () => {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
};

export function CreateOrganizationPage({ orgs, onCreated, onPick }) {
  const [name, setName] = useState('');
  const [timezone, setTimezone] = useState(guessTimezone());
  const [run, busy, error] = useAction();
  const submit = (e) => {
    e.preventDefault();
    run(async () => {
      await api('POST', '/api/organizations', { name, timezone });
      await onCreated();
    });
  };
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return html`<section class="narrow-section">
    <h1>Create an organization</h1>
    <p>An organization is your business: its customers, jobs, invoices and settings. You become its owner.</p>
    <${Alert} error=${error} />
    <form onSubmit=${submit} class="stack card">
      <label>Organization name<input name="orgName" required value=${name} onInput=${(e) => setName(e.target.value)} /></label>
      <label>Timezone<input name="timezone" list="tz-list" required value=${timezone} onInput=${(e) => setTimezone(e.target.value)} /></label>
      <datalist id="tz-list">${zones.map((z) => html`<option value=${z} />`)}</datalist>
      <button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create organization'}</button>
    </form>
    ${
      orgs.length > 0
        ? html`<h2>Or open one of yours</h2>
          <ul class="plain">${orgs.map(
            (o) =>
              html`<li><button type="button" class="link" onClick=${() => run(() => onPick(o.id))}>${o.name}</button> <span class="muted">(${o.role})</span></li>`,
          )}</ul>`
        : null
    }
  </section>`;
}

/** "Forgot your password?": the same answer whatever the address (the API's too). */
export function ForgotPasswordPage() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(null);
  const [run, busy, error] = useAction();
  const submit = (e) => {
    e.preventDefault();
    run(async () => {
      const res = await api('POST', '/api/auth/request-password-reset', { email }, { quiet401: true });
      setSent(res.message);
    });
  };
  return html`<main class="narrow" id="main" tabindex="-1">
    <h1>Reset your password</h1>
    <${Alert} error=${error} />
    ${
      sent
        ? html`<${Alert} kind="info" error=${`${sent}. The link works once, for one hour.`} />`
        : html`<form onSubmit=${submit} class="stack">
            <p>Enter the email you sign in with. We mail you a link to choose a new password.</p>
            <label>Email<input type="email" name="email" autocomplete="username" required value=${email} onInput=${(e) => setEmail(e.target.value)} /></label>
            <button type="submit" disabled=${busy}>${busy ? 'Sending…' : 'Mail me a link'}</button>
          </form>`
    }
    <p><${Link} href="/app/sign-in">Back to sign in<//></p>
  </main>`;
}

/** The page the reset mail links to: `?token=` from the mail, a new password, then sign in. */
export function ResetPasswordPage({ onDone }) {
  const token = new URLSearchParams(location.search).get('token') ?? '';
  const [password, setPassword] = useState('');
  const [run, busy, error] = useAction();
  const submit = (e) => {
    e.preventDefault();
    run(async () => {
      await api('POST', '/api/auth/reset-password', { token, newPassword: password }, { quiet401: true });
      await onDone('Your password is changed, and every session was signed out. Sign in with the new one.');
    });
  };
  if (!token) {
    return html`<main class="narrow" id="main" tabindex="-1">
      <h1>Choose a new password</h1>
      <p>This page needs the link from a reset mail. <${Link} href="/app/forgot-password">Ask for a new one<//>.</p>
    </main>`;
  }
  return html`<main class="narrow" id="main" tabindex="-1">
    <h1>Choose a new password</h1>
    <${Alert} error=${error} />
    ${error?.status === 400 && /token/.test(error.message) ? html`<p><${Link} href="/app/forgot-password">Ask for a new link<//></p>` : null}
    <form onSubmit=${submit} class="stack">
      <label><span>New password <span class="muted">(at least 8 characters)</span></span><input type="password" name="newPassword" autocomplete="new-password" minlength="8" maxlength="128" required value=${password} onInput=${(e) => setPassword(e.target.value)} /></label>
      <button type="submit" disabled=${busy}>${busy ? 'Saving…' : 'Set the new password'}</button>
    </form>
  </main>`;
}

/** The page an invitation mail links to: accept with one button (signed in as the invitee). */
export function InvitationPage({ id, user, onAccepted }) {
  const [run, busy, error] = useAction();
  const accept = () =>
    run(async () => {
      const res = await api('POST', `/api/invitations/${encodeURIComponent(id)}/accept`);
      await onAccepted(res.organizationId);
    });
  return html`<section class="narrow-section">
    <h1>Join the team</h1>
    <p>You were invited to an organization. You are signed in as <strong>${user.email}</strong>; the invitation must name this address.</p>
    <${Alert} error=${error?.status === 404 ? new Error(`This invitation is not for ${user.email}, or it no longer exists. Sign in with the address the mail was sent to.`) : error} />
    <button type="button" onClick=${accept} disabled=${busy}>${busy ? 'Accepting…' : 'Accept the invitation'}</button>
  </section>`;
}
