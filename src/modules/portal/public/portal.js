/*
 * The customer page's actions, on top of the server-rendered document: pay an
 * invoice by card (Stripe's Payment Element on the portal intent's clientSecret),
 * approve or decline an estimate, sign a contract. Each calls the public portal
 * API of this link, then reloads so the server shows the new state. After a card
 * payment the page asks the API until Stripe's webhook has recorded it.
 */

const root = document.getElementById('portal');
const token = root?.dataset.token;
const statusBox = document.getElementById('portal-status');
const errorBox = document.getElementById('portal-error');

/** Polling after a payment: every 2 s, for at most 5 minutes. */
const POLL_MS = 2000;
const POLL_FOR_MS = 5 * 60 * 1000;

function say(text) {
  if (!statusBox) return;
  statusBox.textContent = text;
  statusBox.hidden = !text;
}
function fail(text) {
  if (!errorBox) return;
  errorBox.textContent = text;
  errorBox.hidden = !text;
  if (text) say('');
}

/** The portal API of this link; an error answer becomes its sentence. */
async function call(method, path, body) {
  let res;
  try {
    res = await fetch(`/api/portal/${encodeURIComponent(token)}${path}`, {
      method,
      headers: { accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch {
    throw new Error('The connection failed. Check your internet connection and try again.');
  }
  const json = await res.json().catch(() => null);
  if (!res.ok) {
    if (res.status === 404) throw new Error('This link no longer works. Ask for a new link.');
    if (res.status === 429) throw new Error('Too many attempts. Please wait a minute and try again.');
    throw new Error(json?.error?.message ?? `The request failed (${res.status}). Please try again.`);
  }
  return json?.data;
}

/** Reload without Stripe's return parameters, so a refresh does not start waiting again. */
const reload = () => window.location.replace(window.location.pathname);

function busy(button, on, label) {
  if (!button) return;
  if (on) {
    button.dataset.label = button.textContent;
    button.textContent = label;
  } else if (button.dataset.label) {
    button.textContent = button.dataset.label;
  }
  button.disabled = on;
}

/* ------------------------------------------------------------ invoices: card payment */

/*
 * Between Stripe's confirmation and its webhook the server still shows the balance due.
 * The browser remembers the confirmed payment (per link, for PENDING_FOR_MS), so a reload
 * in that window shows "being confirmed" instead of offering to pay again.
 */
const PENDING_FOR_MS = 30 * 60 * 1000;
const pendingKey = () => `portal-payment:${token}`;

function rememberPayment(balance) {
  try {
    localStorage.setItem(pendingKey(), JSON.stringify({ balance, at: Date.now() }));
  } catch {
    // Storage refused (private mode): only a reload loses the "being confirmed" message.
  }
}
function forgetPayment() {
  try {
    localStorage.removeItem(pendingKey());
  } catch {
    // Nothing stored.
  }
}
/** A payment this browser confirmed for the balance the page shows now, not yet recorded by the server. */
function paymentPending() {
  try {
    const pending = JSON.parse(localStorage.getItem(pendingKey()) ?? 'null');
    const fresh = pending && Date.now() - pending.at < PENDING_FOR_MS;
    if (fresh && pending.balance === Number(root.dataset.balance)) return true;
    if (pending) forgetPayment();
  } catch {
    forgetPayment();
  }
  return false;
}

/** Ask until the invoice shows the payment (Stripe's webhook recorded it), then show the page afresh. */
function waitForPayment() {
  const before = Number(root.dataset.balance);
  rememberPayment(before);
  say('Payment received by Stripe. Confirming with the company… this page updates by itself.');
  const started = Date.now();
  const tick = async () => {
    try {
      const data = await call('GET', '');
      const doc = data?.document;
      if (doc && (doc.status === 'paid' || doc.balance < before)) {
        forgetPayment();
        return reload();
      }
    } catch {
      // A failed check is retried at the next tick.
    }
    if (Date.now() - started > POLL_FOR_MS) {
      say('Your payment is still being confirmed. You will get a receipt; reload this page later to see it.');
      return;
    }
    setTimeout(tick, POLL_MS);
  };
  setTimeout(tick, POLL_MS);
}

function setUpPayment() {
  const start = document.getElementById('pay-start');
  const form = document.getElementById('payment-form');
  const submit = document.getElementById('pay-submit');
  const key = root.dataset.stripeKey;
  if (!start || !form || !key) {
    // Paid, void or closed: nothing is pending any more.
    forgetPayment();
    return;
  }
  let stripe;
  let elements;

  start.addEventListener('click', async () => {
    fail('');
    if (typeof window.Stripe !== 'function') {
      fail('Card payment could not load (Stripe.js is unreachable). Check your connection and reload the page.');
      return;
    }
    busy(start, true, 'Preparing secure payment…');
    try {
      const intent = await call('POST', '/pay', {});
      stripe = window.Stripe(key);
      elements = stripe.elements({ clientSecret: intent.clientSecret, appearance: { theme: 'stripe' } });
      elements.create('payment', { layout: 'tabs' }).mount('#payment-element');
      start.hidden = true;
      form.hidden = false;
    } catch (err) {
      fail(err.message);
    } finally {
      busy(start, false);
    }
  });

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    fail('');
    busy(submit, true, 'Paying…');
    try {
      const { error } = await stripe.confirmPayment({
        elements,
        confirmParams: { return_url: window.location.href.split('?')[0] },
        redirect: 'if_required',
      });
      if (error) {
        fail(error.message ?? 'The payment did not go through. Please check your details and try again.');
        busy(submit, false);
        return;
      }
      form.hidden = true;
      waitForPayment();
    } catch {
      fail('The payment could not be sent. Please try again.');
      busy(submit, false);
    }
  });

  // Back from a bank's confirmation page (3-D Secure): Stripe appends the outcome to return_url.
  const outcome = new URLSearchParams(window.location.search).get('redirect_status');
  if (outcome === 'succeeded' || outcome === 'processing' || (!outcome && paymentPending())) {
    start.hidden = true;
    waitForPayment();
  } else if (outcome === 'failed') {
    forgetPayment();
    fail('The payment was not completed. You can try again with another card.');
  }
}

/* ------------------------------------------------------------ estimates and contracts */

function setUpActions() {
  for (const button of document.querySelectorAll('button[data-action]')) {
    button.addEventListener('click', async () => {
      const action = button.dataset.action;
      if (action === 'decline' && !window.confirm('Decline this estimate?')) return;
      fail('');
      busy(button, true, action === 'approve' ? 'Approving…' : 'Declining…');
      try {
        await call('POST', `/${action}`);
        reload();
      } catch (err) {
        fail(err.message);
        busy(button, false);
      }
    });
  }
  const sign = document.getElementById('sign-form');
  sign?.addEventListener('submit', async (event) => {
    event.preventDefault();
    fail('');
    const submit = sign.querySelector('button[type=submit]');
    busy(submit, true, 'Signing…');
    try {
      await call('POST', '/sign', { signerName: sign.elements.signerName.value.trim() });
      reload();
    } catch (err) {
      fail(err.message);
      busy(submit, false);
    }
  });
}

if (root && token) {
  if (root.dataset.type === 'invoice') setUpPayment();
  setUpActions();
}
