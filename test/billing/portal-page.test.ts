import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDate, formatMoment } from '../../src/modules/portal/portal.html.js';
import { prefersHtml } from '../../src/platform/accept.js';
import { formatMoney } from '../../src/platform/money.js';
import { createCustomer, line, setSettings } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/*
 * The customer page without a browser: who gets the page and who the JSON, escaping of
 * the organization's and customer's text, the headers, and what the page records.
 * test/console/portal.test.ts drives the same page in Chromium.
 */
describe('the customer page (HTTP)', () => {
  let h: Harness;
  let owner: TestUser;
  let customerId: string;

  beforeAll(async () => {
    h = await createHarness({ BASE_URL: 'http://crm.test' });
    owner = await newTenant(h, { timezone: 'Asia/Tokyo' });
    await setSettings(h, owner.organizationId, {
      companyName: 'Lawn <script>alert(1)</script> & Co',
      currency: 'EUR',
    });
    customerId = (await createCustomer(h, owner, { firstName: '"Pat"', lastName: '<b>Rivera</b>' })).id;
  });
  afterAll(async () => {
    await h?.close();
  });

  const sendEstimate = async () => {
    const est = await owner.call('POST', '/api/estimates', { customerId, lineItems: [line('Patio <i>', 2, 1234.5)] });
    expect(est.statusCode, est.body).toBe(201);
    const sent = await owner.call('POST', `/api/estimates/${est.json().data.id}/send`);
    expect(sent.statusCode, sent.body).toBe(200);
    return { id: est.json().data.id as string, link: new URL(sent.json().data.portalUrl).pathname };
  };

  it('tells a browser from an integration by the Accept header', () => {
    expect(prefersHtml('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toBe(true);
    expect(prefersHtml('text/html')).toBe(true);
    expect(prefersHtml(undefined)).toBe(false);
    expect(prefersHtml('*/*')).toBe(false);
    expect(prefersHtml('application/json')).toBe(false);
    expect(prefersHtml('application/json, text/html;q=0.5')).toBe(false);
    expect(prefersHtml('text/html;q=0, */*')).toBe(false);
    expect(prefersHtml('text/html;q=abc')).toBe(false);
  });

  it('writes calendar dates as they are, moments in the organization’s timezone, money from cents', () => {
    // A calendar date never moves with a timezone (no "Feb 27" west of UTC).
    expect(formatDate('2026-02-28')).toBe('Feb 28, 2026');
    // 02:00 UTC on March 1 is still February 28 in Chicago.
    // (ICU versions differ in the space before AM/PM: a narrow no-break space or a plain one.)
    const moment = (iso: string, tz: string) => formatMoment(iso, tz).replace(/\u202f/g, ' ');
    expect(moment('2026-03-01T02:00:00Z', 'America/Chicago')).toBe('Feb 28, 2026, 8:00 PM CST');
    expect(moment('2026-03-01T02:00:00Z', 'Asia/Tokyo')).toBe('Mar 1, 2026, 11:00 AM GMT+9');
    expect(formatMoney(0.1 + 0.2, 'USD')).toBe('$0.30');
    expect(formatMoney(292.28, 'EUR')).toBe('€292.28');
  });

  it('sends a browser from the mailed link to the page and keeps the JSON for everyone else', async () => {
    const { link } = await sendEstimate();
    const token = link.split('/').pop() as string;
    const json = await h.app.inject({ method: 'GET', url: link });
    expect(json.statusCode).toBe(200);
    expect(json.json().data.type).toBe('estimate');
    expect(json.headers.vary).toContain('Accept');
    const asJson = await h.app.inject({ method: 'GET', url: link, headers: { accept: 'application/json' } });
    expect(asJson.json().data.type).toBe('estimate');
    const browser = await h.app.inject({ method: 'GET', url: link, headers: { accept: 'text/html,*/*;q=0.8' } });
    expect(browser.statusCode).toBe(303);
    expect(browser.headers.location).toBe(`/portal/${token}`);
  });

  it('renders the page with every value escaped, money in the currency and the headers of a private page', async () => {
    const { id, link } = await sendEstimate();
    const page = await h.app.inject({ method: 'GET', url: link.replace('/api/portal/', '/portal/') });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['x-robots-tag']).toContain('noindex');
    // An estimate page loads no Stripe.js, and its policy admits nothing from elsewhere.
    const csp = page.headers['content-security-policy'] as string;
    expect(csp).toContain("script-src 'self';");
    expect(csp).not.toContain('stripe');
    const html = page.body;
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).toContain('Lawn &lt;script&gt;alert(1)&lt;/script&gt; &amp; Co');
    expect(html).toContain('&quot;Pat&quot; &lt;b&gt;Rivera&lt;/b&gt;');
    expect(html).toContain('Patio &lt;i&gt;');
    expect(html).not.toContain('js.stripe.com');
    // 2 × 1,234.50 in euros, formatted from cents.
    expect(html).toContain('€2,469.00');
    // Opening the page is a view, as through the JSON: a sent estimate becomes viewed.
    expect((await owner.call('GET', `/api/estimates/${id}`)).json().data.status).toBe('viewed');
  });

  it('serves its two files from a fixed list', async () => {
    const js = await h.app.inject({ method: 'GET', url: '/portal-assets/portal.js' });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    const again = await h.app.inject({
      method: 'GET',
      url: '/portal-assets/portal.js',
      headers: { 'if-none-match': js.headers.etag as string },
    });
    expect(again.statusCode).toBe(304);
    for (const url of [
      '/portal-assets/nothing.js',
      '/portal-assets/..%2Fportal.service.ts',
      '/portal-assets/toString',
    ]) {
      expect((await h.app.inject({ method: 'GET', url })).statusCode, url).toBe(404);
    }
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: object };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/portal'))).toEqual([]);
  });
});
