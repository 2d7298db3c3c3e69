import { readFileSync } from 'node:fs';
import { eq } from 'drizzle-orm';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portalTokens } from '../../src/db/schema/index.js';
import { formatVisitDate } from '../../src/modules/portal/portal.html.js';
import { today as todayIn } from '../../src/platform/dates.js';
import { createCustomer, deliverMail, line, mailText, type ReceivedMail, startSmtp } from '../factories.js';
import { newTenant, type TestUser } from '../harness.js';
import { deliver, paymentIntent, STRIPE_SECRET, stripeEvent } from '../payments/helpers.js';
import { type StripeStandIn, startStripeStandIn } from '../payments/stripe-stand-in.js';
import {
  type ConsoleServer,
  expectAccessibleControls,
  newPage,
  screenshot,
  signUpInBrowser,
  startConsole,
  uniqueEmail,
} from './browser.js';

/*
 * Issue 29 item 2 in a real browser: the customer opens the link of the mail they
 * received, reads the invoice, downloads its PDF and pays by card. Stripe's API is the
 * stand-in of test/payments; Stripe.js (https://js.stripe.com/v3) is answered by the
 * small script below, which mounts a fake card field and records confirmPayment. The
 * signed payment_intent.succeeded then shows the invoice paid on the same page.
 */

/** Stands in for Stripe.js: `Stripe(key).elements({clientSecret}).create('payment').mount(…)` and `confirmPayment`. */
const STRIPE_JS = `(() => {
  const record = (window.__stripeJs = { keys: [], elements: [], confirmations: [] });
  window.Stripe = (key) => {
    record.keys.push(key);
    return {
      elements(options) {
        record.elements.push(options);
        return {
          clientSecret: options.clientSecret,
          create(type) {
            return {
              mount(selector) {
                const label = document.createElement('label');
                label.textContent = 'Card number (Stripe stand-in, ' + type + ')';
                const input = document.createElement('input');
                input.value = '4242 4242 4242 4242';
                label.append(input);
                document.querySelector(selector).append(label);
              },
            };
          },
        };
      },
      confirmPayment(params) {
        record.confirmations.push({
          clientSecret: params.elements.clientSecret,
          returnUrl: params.confirmParams.return_url,
          redirect: params.redirect,
        });
        return Promise.resolve({ paymentIntent: { status: 'processing' } });
      },
    };
  };
})();`;

const isStripeJs = (url: URL) => url.origin === 'https://js.stripe.com' && url.pathname.startsWith('/v3');
const PK = 'pk_test_portalStandIn0123456789';

describe('the customer page at the portal link', () => {
  let server: ConsoleServer;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let stripe: StripeStandIn;
  let owner: TestUser;
  let customerId: string;
  let context: BrowserContext;
  let page: Page;
  const stripeJsRequests: string[] = [];

  beforeAll(async () => {
    smtp = await startSmtp();
    stripe = await startStripeStandIn();
    server = await startConsole({ SMTP_URL: smtp.url, ...stripe.env });
    owner = await newTenant(server.h, { name: 'Green Acres Lawn', timezone: 'America/Chicago' });
    const set = await owner.call('PATCH', '/api/settings', {
      companyName: 'Green Acres Lawn Care',
      companyEmail: 'office@greenacres.example',
      companyPhone: '+1 312 555 0142',
      companyAddress: '12 Elm Street\nSpringfield, IL 62701',
      taxRate: 8.25,
      stripeSecretKey: 'sk_test_portalStandIn0123456789',
      stripePublishableKey: PK,
      stripeWebhookSecret: STRIPE_SECRET,
    });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().data).toMatchObject({ stripePublishableKey: PK, stripeSecretKeyConfigured: true });
    customerId = (
      await createCustomer(server.h, owner, { firstName: 'Pat', lastName: 'Rivera', email: 'pat@example.com' })
    ).id;
    ({ context, page } = await newPage(server));
    await context.route(isStripeJs, (route) => {
      stripeJsRequests.push(route.request().url());
      return route.fulfill({ status: 200, contentType: 'text/javascript', body: STRIPE_JS });
    });
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
    await stripe?.close();
  });

  /** Sends the document and answers the link of the mail the customer received. */
  async function mailedLink(path: string, body?: unknown): Promise<string> {
    const sent = await owner.call('POST', path, body);
    expect(sent.statusCode, sent.body).toBe(200);
    expect(await deliverMail(server.h)).toBeGreaterThan(0);
    const mail = smtp.received[smtp.received.length - 1] as ReceivedMail;
    const text = mailText(mail.raw);
    const link = /(https?:\/\/\S+\/api\/portal\/pt_[A-Za-z0-9_-]+)/.exec(text)?.[1];
    expect(link, text).toBeTruthy();
    return link as string;
  }

  async function sentInvoice(lines = [line('Weekly mowing', 4, 45), line('Hedge trimming', 1.5, 60)]) {
    const res = await owner.call('POST', '/api/invoices', { customerId, lineItems: lines, notes: 'Thank you!' });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().data.id as string;
    return { id, link: await mailedLink(`/api/invoices/${id}/send`) };
  }

  it('opens the mailed link as a page, downloads the PDF, pays by card and shows the invoice paid', async () => {
    const invoice = await sentInvoice();

    // Integrators still get JSON at the link; a browser is sent to the page.
    const json = await fetch(invoice.link);
    expect(json.headers.get('content-type')).toContain('application/json');
    expect((await json.json()).data).toMatchObject({ type: 'invoice', document: { id: invoice.id } });
    const browserLike = await fetch(invoice.link, { headers: { accept: 'text/html,*/*;q=0.8' }, redirect: 'manual' });
    expect(browserLike.status).toBe(303);
    const pagePath = browserLike.headers.get('location') as string;
    expect(pagePath).toMatch(/^\/portal\/pt_/);

    await page.goto(invoice.link);
    expect(new URL(page.url()).pathname).toBe(pagePath);
    await page.getByText('Invoice INV-000001').first().waitFor();
    // 4 × 45 + 1.5 × 60 = 270, tax 8.25 % = 22.28: 292.28, formatted from cents in USD.
    expect(await page.locator('.amount').textContent()).toBe('Amount due: $292.28');
    await page.getByRole('heading', { name: 'Green Acres Lawn Care', exact: true }).waitFor();
    await page.getByText('office@greenacres.example').first().waitFor();
    await page.getByText('Billed to').waitFor();
    await page.getByText('Pat Rivera').waitFor();
    await page.getByRole('cell', { name: 'Hedge trimming' }).waitFor();
    await expectAccessibleControls(page);
    expect(stripeJsRequests.length).toBe(1);

    const response = await page.request.get(pagePath);
    const csp = response.headers()['content-security-policy'] as string;
    expect(csp).toContain("script-src 'self' https://js.stripe.com");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(response.headers()['cache-control']).toBe('no-store');
    expect(response.headers()['referrer-policy']).toBe('same-origin');
    expect(await response.text()).not.toMatch(/(src|href)="https?:\/\/(?!js\.stripe\.com\/v3\/")/);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download PDF' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('INV-000001.pdf');
    const pdf = readFileSync(await download.path());
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');

    await screenshot(page, 'invoice', 'docs/portal');
    await page.getByRole('button', { name: 'Pay $292.28 by card' }).click();
    await page.getByLabel(/Card number/).waitFor();
    // The portal route created the intent at Stripe for the balance, in cents.
    const [intent] = [...stripe.intents.values()];
    expect(intent).toMatchObject({ amount: 29228, currency: 'usd', metadata: { invoiceId: invoice.id } });
    expect(await page.evaluate(() => (window as never as { __stripeJs: { keys: string[] } }).__stripeJs.keys)).toEqual([
      PK,
    ]);
    await screenshot(page, 'invoice-card', 'docs/portal');
    await page.getByRole('button', { name: 'Pay $292.28', exact: true }).click();
    await page.getByText('Payment received by Stripe').waitFor();
    const confirmations = await page.evaluate(
      () => (window as never as { __stripeJs: { confirmations: unknown[] } }).__stripeJs.confirmations,
    );
    expect(confirmations).toEqual([
      { clientSecret: intent?.client_secret, returnUrl: `${server.base}${pagePath}`, redirect: 'if_required' },
    ]);

    // A reload before Stripe's webhook arrives: the page says the payment is being
    // confirmed and does not offer to pay again.
    await page.reload();
    await page.getByText('Payment received by Stripe').waitFor();
    expect(await page.getByRole('button', { name: /Pay/ }).count()).toBe(0);

    // Stripe tells the server; the page, asking every 2 s, shows the invoice paid.
    const event = stripeEvent('payment_intent.succeeded', paymentIntent(intent?.id as string, 29228, invoice.id));
    const delivered = await deliver(server.h, owner.organizationId, event);
    expect(delivered.statusCode, delivered.body).toBe(200);
    await page.getByText('Paid on', { exact: false }).waitFor();
    await page.locator('.badge', { hasText: 'Paid' }).waitFor();
    expect(await page.getByRole('button', { name: /Pay/ }).count()).toBe(0);
    await expectAccessibleControls(page);
    await screenshot(page, 'invoice-paid', 'docs/portal');
  });

  it('says so when card payment is not set up, and shows void invoices, expired and unknown links', async () => {
    const other = await newTenant(server.h, { name: 'No Stripe Lawn' });
    // Both keys but no webhook secret: a payment would never reach the invoice, so no card either.
    const keys = await other.call('PATCH', '/api/settings', {
      stripeSecretKey: 'sk_test_noWebhook0123456789',
      stripePublishableKey: 'pk_test_noWebhook0123456789',
    });
    expect(keys.statusCode, keys.body).toBe(200);
    const c = await createCustomer(server.h, other, { email: 'kim@example.com' });
    const inv = (
      await other.call('POST', '/api/invoices', { customerId: c.id, lineItems: [line('Mowing', 1, 50)] })
    ).json().data;
    const sent = await other.call('POST', `/api/invoices/${inv.id}/send`);
    const pagePath = new URL(sent.json().data.portalUrl).pathname.replace('/api/portal/', '/portal/');
    const before = stripeJsRequests.length;
    await page.goto(pagePath);
    await page.getByText('Online card payment is not available for this invoice').waitFor();
    expect(await page.getByRole('button', { name: /Pay/ }).count()).toBe(0);
    expect(stripeJsRequests.length).toBe(before);
    const csp = (await page.request.get(pagePath)).headers()['content-security-policy'] as string;
    expect(csp).not.toContain('stripe');

    expect((await other.call('POST', `/api/invoices/${inv.id}/void`)).statusCode).toBe(200);
    await page.reload();
    await page.getByText('This invoice was voided').waitFor();
    await page.locator('.badge', { hasText: 'Void' }).waitFor();

    const token = pagePath.split('/').pop() as string;
    await server.h.admin.db
      .update(portalTokens)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(portalTokens.organizationId, other.organizationId));
    const expired = await page.goto(`/portal/${token}`);
    expect(expired?.status()).toBe(410);
    await page.getByRole('heading', { name: 'This link has expired' }).waitFor();
    await page.getByText('Ask No Stripe Lawn').waitFor();
    await screenshot(page, 'expired', 'docs/portal');

    const unknown = await page.goto(`/portal/pt_${'x'.repeat(43)}`);
    expect(unknown?.status()).toBe(404);
    await page.getByRole('heading', { name: 'This link does not work' }).waitFor();
    expect((await page.goto('/portal-assets/..%2Fportal.page.ts'))?.status()).toBe(404);
  });

  it('shows an error from the pay route on the page', async () => {
    const invoice = await sentInvoice([line('Leaf removal', 1, 80)]);
    stripe.down = true;
    try {
      await page.goto(invoice.link);
      await page.getByRole('button', { name: 'Pay $86.60 by card' }).click();
      await page.getByRole('alert').filter({ hasText: 'Stripe could not be reached' }).waitFor();
    } finally {
      stripe.down = false;
    }
  });

  it('lets the customer approve an estimate and decline another', async () => {
    const newEstimate = async () => {
      const res = await owner.call('POST', '/api/estimates', {
        customerId,
        lineItems: [line('Patio', 2, 250), line('Seeding', 1.5, 33.33)],
        notes: 'Includes cleanup',
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data.id as string;
    };
    const first = await newEstimate();
    await page.goto(await mailedLink(`/api/estimates/${first}/send`));
    await page.getByText('Awaiting your approval').waitFor();
    await page.getByRole('link', { name: 'Download PDF' }).waitFor();
    await expectAccessibleControls(page);
    await screenshot(page, 'estimate', 'docs/portal');
    await page.getByRole('button', { name: 'Approve estimate' }).click();
    await page.getByText('You approved this estimate').waitFor();
    expect((await owner.call('GET', `/api/estimates/${first}`)).json().data.status).toBe('approved');

    const second = await newEstimate();
    await page.goto(await mailedLink(`/api/estimates/${second}/send`));
    await page.getByRole('button', { name: 'Decline' }).click();
    await page.getByText('You declined this estimate').waitFor();
    expect((await owner.call('GET', `/api/estimates/${second}`)).json().data.status).toBe('declined');
  });

  it('lets the customer sign a contract', async () => {
    const res = await owner.call('POST', '/api/contracts', {
      title: 'Lawn care 2026',
      customerId,
      startDate: '2026-04-01',
      endDate: '2026-10-31',
      services: [{ description: 'Weekly mowing, April to October', unitPrice: 45, quantity: 30 }],
      terms: 'Billed monthly; 14 days to pay.',
    });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().data.id as string;
    // Visits twice a week: the page lists the first eight still to come, at 08:00 Chicago time.
    const schedule = await owner.call('POST', '/api/jobs/schedules', {
      customerId,
      title: 'Weekly mowing',
      rrule: 'FREQ=WEEKLY;BYDAY=TU,FR',
      startDate: todayIn('America/Chicago'),
      startTime: '08:00',
      billing: { mode: 'none' },
    });
    expect(schedule.statusCode, schedule.body).toBe(201);
    const next = schedule.json().data.nextOccurrences as string[];
    await page.goto(await mailedLink(`/api/contracts/${id}/send`));
    await page.getByText('Awaiting your signature').waitFor();
    const visits = page.getByRole('region', { name: 'Upcoming visits' });
    await visits.getByRole('listitem').first().waitFor();
    expect(await visits.getByRole('listitem').count()).toBe(8);
    expect(await visits.getByRole('listitem').first().textContent()).toContain(
      `${formatVisitDate(next[0] as string)} · 8:00 AM`,
    );
    await visits.getByText('Weekly mowing').first().waitFor();
    await visits.getByText(/and \d+ more after/).waitFor();
    await screenshot(page, 'contract-visits', 'docs/portal');
    await page.getByText('Billed monthly; 14 days to pay.').first().waitFor();
    await expectAccessibleControls(page);
    await page.getByLabel('Your full name').fill('Pat Rivera');
    await page.getByLabel('I have read this contract and agree to its terms').check();
    await page.getByRole('button', { name: 'Sign contract' }).click();
    await page.getByText('Signed by Pat Rivera on').waitFor();
    const signed = (await owner.call('GET', `/api/contracts/${id}`)).json().data;
    expect(signed).toMatchObject({ status: 'signed', signature: { signerName: 'Pat Rivera' } });
    await screenshot(page, 'contract-signed', 'docs/portal');
  });

  it('fits a phone screen', async () => {
    const invoice = await sentInvoice([line('Spring cleanup', 1, 120)]);
    const phone = await server.browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    await phone.route(isStripeJs, (route) =>
      route.fulfill({ status: 200, contentType: 'text/javascript', body: STRIPE_JS }),
    );
    const mobile = await phone.newPage();
    await mobile.goto(invoice.link);
    await mobile.getByRole('button', { name: /Pay .* by card/ }).waitFor();
    // Nothing wider than the screen: no sideways scrolling.
    expect(await mobile.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await screenshot(mobile, 'invoice-phone', 'docs/portal');
    await phone.close();
  });

  it('sets the Stripe keys from the console settings page', async () => {
    const { page: admin } = await newPage(server);
    await signUpInBrowser(admin, uniqueEmail('stripe-owner'), 'Keys Lawn');
    await admin.getByRole('link', { name: 'Settings' }).click();
    await admin.getByLabel('Publishable key').fill('pk_test_consoleKey0123456789');
    await admin.getByLabel(/Secret key/).fill('sk_test_consoleKey0123456789');
    await admin.getByLabel(/Webhook signing secret/).fill('whsec_consoleSecret0123456789');
    await admin.getByRole('button', { name: 'Save settings' }).click();
    await admin.getByText('Settings saved.').waitFor();
    await admin.getByText('Secret key (set)').waitFor();
    expect(await admin.getByLabel(/Secret key/).inputValue()).toBe('');
    const settings = (await (await admin.request.get('/api/settings')).json()).data;
    expect(settings).toMatchObject({
      stripePublishableKey: 'pk_test_consoleKey0123456789',
      stripeSecretKeyConfigured: true,
      stripeWebhookConfigured: true,
    });
    await admin.context().close();
  });
});
