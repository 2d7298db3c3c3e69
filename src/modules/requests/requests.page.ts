import { SMS_CONSENT_WORDING } from './requests.schemas.js';

/*
 * The booking form at /book/{slug}, rendered on the server: it is a plain HTML form that posts
 * without JavaScript; the one script is the ALTCHA widget (served from this service), which the
 * spam check needs. Every value goes through `html`, which escapes it.
 */

class Html {
  constructor(readonly value: string) {}
}
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
function part(v: unknown): string {
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map(part).join('');
  if (v === null || v === undefined || v === false) return '';
  return escapeHtml(String(v));
}
function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] as string;
  values.forEach((v, i) => {
    out += part(v) + strings[i + 1];
  });
  return new Html(out);
}

export interface RenderedPage {
  status: number;
  html: string;
}

export interface BookingAssets {
  /** Short content hashes, so a changed file is fetched again. */
  css: string;
  js: string;
}

export interface BookingFormModel {
  slug: string;
  name: string;
  services: Array<{ id: string; name: string; description: string | null }>;
  /** Today in the organization's timezone: the earliest preferred date. */
  today: string;
}

function layout(title: string, body: Html, assets: BookingAssets | undefined, script: boolean): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="stylesheet" href="/book-assets/booking.css?v=${assets?.css ?? '0'}">
${
  script
    ? html`<link rel="stylesheet" href="/book-assets/altcha.css?v=${assets?.js ?? '0'}">
<script type="module" src="/book-assets/altcha.js?v=${assets?.js ?? '0'}"></script>
<script type="module" src="/book-assets/booking.js?v=${assets?.js ?? '0'}"></script>`
    : ''
}
</head>
<body>
<main class="page">${body}</main>
</body>
</html>
`.value;
}

const field = (label: string, input: Html, hint?: string) =>
  html`<label class="field"><span class="label">${label}</span>${input}${hint ? html`<span class="hint">${hint}</span>` : ''}</label>`;

export function renderBookingPage(m: BookingFormModel, assets: BookingAssets): RenderedPage {
  const action = `/api/public/${m.slug}/requests`;
  const services =
    m.services.length === 0
      ? ''
      : html`<fieldset class="group">
  <legend>Services</legend>
  <div class="choices">
  ${m.services.map(
    (s) =>
      html`<label class="choice"><input type="checkbox" name="serviceIds" value="${s.id}"><span><strong>${s.name}</strong>${s.description ? html`<small>${s.description}</small>` : ''}</span></label>`,
  )}
  </div>
</fieldset>`;
  const body = html`<header class="top">
  <p class="eyebrow">Request a visit</p>
  <h1>${m.name}</h1>
  <p class="lead">Tell us what you need and where. We will get back to you to confirm a time.</p>
</header>
<form class="card" method="post" action="${action}">
  <fieldset class="group">
    <legend>About you</legend>
    <div class="row">
      ${field('First name', html`<input name="firstName" required maxlength="100" autocomplete="given-name">`)}
      ${field('Last name', html`<input name="lastName" maxlength="100" autocomplete="family-name">`)}
    </div>
    <div class="row">
      ${field('Email', html`<input name="email" type="email" maxlength="254" autocomplete="email">`)}
      ${field('Phone', html`<input name="phone" type="tel" maxlength="40" autocomplete="tel">`)}
    </div>
    <p class="hint">An email address or a phone number, so we can answer.</p>
  </fieldset>
  <fieldset class="group">
    <legend>Where</legend>
    ${field('Street', html`<input name="street" required maxlength="200" autocomplete="address-line1">`)}
    <div class="row three">
      ${field('City', html`<input name="city" required maxlength="100" autocomplete="address-level2">`)}
      ${field('State', html`<input name="state" maxlength="50" autocomplete="address-level1">`)}
      ${field('ZIP', html`<input name="zip" maxlength="20" autocomplete="postal-code" inputmode="numeric">`)}
    </div>
  </fieldset>
  ${services}
  <fieldset class="group">
    <legend>What and when</legend>
    ${field('What do you need?', html`<textarea name="description" required maxlength="2000" rows="4"></textarea>`)}
    <div class="row dates">
      ${[1, 2, 3].map((n) => field(`Preferred date ${n}`, html`<input name="preferredDates" type="date" min="${m.today}">`, n === 1 ? 'Optional' : undefined))}
    </div>
    ${field(
      'Time of day',
      html`<select name="preferredTime"><option value="any">Any time</option><option value="morning">Morning</option><option value="afternoon">Afternoon</option></select>`,
    )}
    <label class="choice consent"><input type="checkbox" name="smsConsent"><span>${SMS_CONSENT_WORDING}</span></label>
  </fieldset>
  <div class="trap" aria-hidden="true"><label>Website <input name="website" tabindex="-1" autocomplete="off"></label></div>
  <div class="check">
    <altcha-widget challenge="/api/public/${m.slug}/challenge" name="altcha" auto="onfocus"></altcha-widget>
    <noscript><p class="hint">The spam check needs JavaScript: please switch it on to send this form, or call us.</p></noscript>
  </div>
  <button type="submit" class="send">Send request</button>
</form>
<footer class="foot">Your details go to ${m.name} only.</footer>`;
  return { status: 200, html: layout(`Request a visit · ${m.name}`, body, assets, true) };
}

export function renderNotFoundPage(): RenderedPage {
  const body = html`<section class="card message"><h1>No booking form here</h1><p>Check the address, or ask the business for its booking link.</p></section>`;
  return { status: 404, html: layout('Not found', body, undefined, false) };
}

/** After a browser's form post: thanks, or what was wrong (the JSON error's words) with a way back. */
export function renderOutcomePage(o: { ok: boolean; status: number; slug: string; message?: string }): RenderedPage {
  const back = `/book/${o.slug}`;
  const body = o.ok
    ? html`<section class="card message"><h1>Thank you!</h1><p>Your request was sent. We will get back to you soon.</p><p><a href="${back}">Send another request</a></p></section>`
    : html`<section class="card message"><h1>${o.status === 429 ? 'Too many requests' : o.status === 404 ? 'No booking form here' : 'Please check the form'}</h1><p>${o.message ?? ''}</p><p><a href="${back}">Back to the form</a> (use your browser's Back button to keep what you typed)</p></section>`;
  return { status: o.status, html: layout(o.ok ? 'Thank you' : 'Request not sent', body, undefined, false) };
}
