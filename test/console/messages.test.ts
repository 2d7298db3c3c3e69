import type { Page } from 'playwright-core';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendDueTexts } from '../../src/modules/messages/messages.tasks.js';
import { twilioDeps } from '../../src/modules/messages/messages.twilio.js';
import { eventsOf, later, line } from '../factories.js';
import type { TestUser } from '../harness.js';
import { startTwilioStandIn, type TwilioStandIn } from '../messages/twilio-stand-in.js';
import {
  type ConsoleServer,
  expectAccessibleControls,
  newPage,
  ownerFromPage,
  screenshot,
  signUpInBrowser,
  startConsole,
  uniqueEmail,
} from './browser.js';

/*
 * Issue 44's "done when" as far as the console goes, in a real browser against the Twilio
 * stand-in: the owner connects Twilio on the SMS settings page, opens a customer, is told in words
 * why a text cannot go yet, records the customer's opt-in, texts them (the worker hands it to the
 * stand-in), the signed delivery report and the customer's signed reply "Can you come Friday?"
 * show in the conversation, and STOP opts the customer out so the next text is refused.
 */
describe('texts in the console: SMS settings and a customer’s conversation', () => {
  let stand: TwilioStandIn;
  let server: ConsoleServer;
  let page: Page;
  let owner: TestUser;
  let customerId: string;
  const sid = `AC${'ab12'.repeat(8)}`;
  const token = 'f00dfeedf00dfeedf00dfeedf00dfeed';
  const from = '+15005550006';
  const mobile = '+14155552671';

  /** Posts a form to a Twilio callback as Twilio does, signed against the exact public URL. */
  const callback = (kind: 'status' | 'inbound', form: Record<string, string>) => {
    const path = `/api/sms/twilio/${owner.organizationId}/${kind}`;
    return fetch(`${server.base}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': twilio.getExpectedTwilioSignature(token, `${server.base}${path}`, form),
      },
      body: new URLSearchParams(form).toString(),
    });
  };
  const inbound = (body: string, n: number) =>
    callback('inbound', {
      MessageSid: `SM${String(n).padStart(32, 'e')}`,
      AccountSid: sid,
      From: mobile,
      To: from,
      Body: body,
    });
  const fitsWidth = async (p: Page, width: number) =>
    expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);

  beforeAll(async () => {
    stand = await startTwilioStandIn();
    stand.accounts.set(sid, token);
    server = await startConsole(stand.env);
    ({ page } = await newPage(server));
    await page.setViewportSize({ width: 1280, height: 900 });
    const email = uniqueEmail('owner');
    await signUpInBrowser(page, email, 'Green Acres');
    owner = await ownerFromPage(server, page, email);
    const res = await owner.call('POST', '/api/customers', {
      firstName: 'Dana',
      lastName: 'Lee',
      phone: '(415) 555-2671',
    });
    expect(res.statusCode, res.body).toBe(201);
    customerId = res.json().data.id;
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await stand?.close();
  });

  it('connects Twilio on the SMS settings page: the token is write-only, shown only as set', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('link', { name: 'Text messages (SMS)' }).click();
    await page.getByRole('heading', { name: 'Text messages' }).waitFor();
    expect(await page.getByTestId('token-state').textContent()).toBe('(not set)');
    await page.getByLabel('Account SID').fill(sid);
    await page.getByLabel('Auth token').fill(token);
    await page.getByLabel('Send from').fill(from);
    await page.getByLabel('Send text messages').check();
    await page.getByLabel('Text message', { exact: true }).check();
    await page.getByLabel('Remind this many hours before a visit').fill('24');
    await page.getByRole('button', { name: 'Save text message settings' }).click();
    await page.getByText('Text message settings saved.').waitFor();
    expect(await page.getByTestId('token-state').textContent()).toBe('(set)');
    expect(await page.getByLabel('Auth token').inputValue()).toBe('');
    expect(await page.getByTestId('inbound-url').textContent()).toBe(
      `${server.base}/api/sms/twilio/${owner.organizationId}/inbound`,
    );
    const settings = (await owner.call('GET', '/api/settings')).json().data;
    expect(settings).toMatchObject({
      twilioConfigured: true,
      twilioAccountSid: sid,
      smsFrom: from,
      smsEnabled: true,
      reminderChannels: ['email', 'sms'],
      visitReminderHours: 24,
      smsQuietHours: null,
    });
    expect(JSON.stringify(settings)).not.toContain(token);

    // Quiet hours: on, saved as the API's {start, end}.
    await page.getByLabel('Hold automatic texts during quiet hours').check();
    await page.getByLabel('Quiet from').fill('21:00');
    await page.getByLabel('until').fill('08:00');
    await page.getByRole('button', { name: 'Save text message settings' }).click();
    await page.getByText('Text message settings saved.').waitFor();
    expect((await owner.call('GET', '/api/settings')).json().data.smsQuietHours).toEqual({
      start: '21:00',
      end: '08:00',
    });
    await expectAccessibleControls(page);
    await fitsWidth(page, 1280);
    await screenshot(page, 'sms-settings');
    await page.setViewportSize({ width: 390, height: 844 });
    await fitsWidth(page, 390);
    await screenshot(page, 'sms-settings-phone');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('says why a text cannot go, records the opt-in, texts, and shows delivery and the reply', async () => {
    await page.getByRole('link', { name: 'Customers' }).click();
    await page.getByRole('link', { name: 'Dana Lee' }).click();
    await page.getByRole('heading', { name: 'Dana Lee' }).waitFor();
    expect(await page.getByText('No text consent yet').count()).toBe(1);

    // Without consent the API refuses (409); the page lists what is missing in words.
    await page.getByLabel('Your text to Dana').fill('Hi Dana, mowing tomorrow at 9.');
    await page.getByRole('button', { name: 'Send text' }).click();
    const refused = page.getByRole('alert');
    await refused.getByText('This customer cannot be texted').waitFor();
    expect(await refused.textContent()).toContain('the customer has not opted in to texts');
    expect(stand.accepted).toHaveLength(0);

    await page.getByLabel('How they agreed').fill('Asked for texts on the phone, 28 Nov');
    await page.getByRole('button', { name: 'Record opt-in' }).click();
    await page.getByText('Opted in to texts', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Send text' }).click();
    const thread = page.getByRole('list', { name: 'Texts with Dana Lee' });
    await thread.getByText('Hi Dana, mowing tomorrow at 9.').waitFor();
    expect(await thread.locator('[data-status=queued]').count()).toBe(1);

    // The worker hands it to "Twilio"; Twilio reports delivery (signed).
    expect(await sendDueTexts(server.h.database, twilioDeps(server.h.config))).toBe(1);
    expect(stand.accepted).toHaveLength(1);
    expect(stand.accepted[0]).toMatchObject({ to: mobile, body: 'Hi Dana, mowing tomorrow at 9.', from });
    const delivered = await callback('status', {
      MessageSid: stand.accepted[0]?.sid as string,
      MessageStatus: 'delivered',
      AccountSid: sid,
    });
    expect(delivered.status).toBe(204);

    // The customer answers; the reply shows in the conversation (the page polls; Refresh is at hand).
    expect((await inbound('Can you come Friday?', 1)).status).toBe(200);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await thread.locator('.bubble-inbound', { hasText: 'Can you come Friday?' }).waitFor();
    expect(await thread.locator('.bubble-outbound[data-status=delivered]').count()).toBe(1);
    const received = await eventsOf(server.h, owner.organizationId, 'message.received');
    expect(received).toHaveLength(1);
    expect(received[0]?.data).toMatchObject({ customerId, message: { body: 'Can you come Friday?' } });

    await expectAccessibleControls(page);
    await fitsWidth(page, 1280);
    await screenshot(page, 'customer-texts');
    await page.setViewportSize({ width: 390, height: 844 });
    await fitsWidth(page, 390);
    await screenshot(page, 'customer-texts-phone');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('sends an invoice’s link by text from the customer page (channels ["sms"]), and the worker texts it', async () => {
    const created = await owner.call('POST', '/api/invoices', {
      customerId,
      lineItems: [line('Spring cleanup', 1, 180)],
    });
    expect(created.statusCode, created.body).toBe(201);
    const invoice = created.json().data;
    await page.reload();
    const form = page.getByRole('form', { name: `Send ${invoice.invoiceNumber}` });
    await form.waitFor();
    // Dana has no email address: the email channel starts unticked; the owner ticks the text.
    expect(await form.getByLabel('Email (no address)').isChecked()).toBe(false);
    expect(await form.getByRole('button', { name: `Send ${invoice.invoiceNumber}` }).isDisabled()).toBe(true);
    await form.getByLabel('Text message').check();
    await expectAccessibleControls(page);
    await screenshot(page, 'customer-documents');
    await form.getByRole('button', { name: `Send ${invoice.invoiceNumber}` }).click();
    await form.getByText(`Sent: texted to ${mobile}.`).waitFor();
    expect((await owner.call('GET', `/api/invoices/${invoice.id}`)).json().data.status).toBe('sent');
    const texts = (await owner.call('GET', `/api/messages?customerId=${customerId}&kind=invoice_link`)).json().data;
    expect(texts).toHaveLength(1);
    expect(texts[0]).toMatchObject({ invoiceId: invoice.id, status: 'queued' });
    // Sent now, the button offers to send it again.
    await form.getByRole('button', { name: `Send ${invoice.invoiceNumber} again` }).waitFor();

    // Past any quiet hours: the worker hands the link to "Twilio".
    expect(await sendDueTexts(server.h.database, twilioDeps(server.h.config), later(1))).toBe(1);
    expect(stand.accepted).toHaveLength(2);
    expect(stand.accepted[1]?.body).toContain(`invoice ${invoice.invoiceNumber}`);
    expect(stand.accepted[1]?.body).toContain(`${server.base}/api/portal/`);
  });

  it('STOP opts the customer out: the page shows it and the next text is refused', async () => {
    expect((await inbound('stop', 2)).status).toBe(200);
    await page.reload();
    await page.getByText('Opted out of texts', { exact: true }).waitFor();
    await page.getByLabel('Your text to Dana').fill('Are you sure?');
    await page.getByRole('button', { name: 'Send text' }).click();
    const refused = page.getByRole('alert');
    await refused.getByText('the customer opted out of texts').waitFor();
    expect(await sendDueTexts(server.h.database, twilioDeps(server.h.config))).toBe(0);
    expect(stand.accepted).toHaveLength(2);

    // An estimate sent by text is refused as a whole (409 naming what is missing): still a draft.
    const created = await owner.call('POST', '/api/estimates', { customerId, lineItems: [line('Aeration', 1, 90)] });
    expect(created.statusCode, created.body).toBe(201);
    const estimate = created.json().data;
    await page.reload();
    const form = page.getByRole('form', { name: `Send ${estimate.estimateNumber}` });
    await form.getByLabel('Text message').check();
    await form.getByRole('button', { name: `Send ${estimate.estimateNumber}` }).click();
    await form.getByRole('alert').getByText('the customer opted out of texts').waitFor();
    expect((await owner.call('GET', `/api/estimates/${estimate.id}`)).json().data.status).toBe('draft');
    const history = (await owner.call('GET', `/api/customers/${customerId}/sms-consent`)).json().data;
    expect(history.map((c: { status: string; source: string }) => `${c.status}/${c.source}`)).toEqual([
      'opted_in/staff',
      'opted_out/keyword',
    ]);
  });
});
