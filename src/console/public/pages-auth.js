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
    <p>New here? <${Link} href="/app/sign-up">Create an account<//></p>
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
    <p>Already have an account? <${Link} href="/app/sign-in">Sign in<//></p>
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
