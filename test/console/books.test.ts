import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSyncDeps } from '../../src/modules/quickbooks/quickbooks.deps.js';
import { syncJobs } from '../../src/modules/quickbooks/quickbooks.sync.js';
import { addDays, today } from '../../src/platform/dates.js';
import type { TestUser } from '../harness.js';
import { feedAll } from '../quickbooks/feed-all.js';
import { type QboStandIn, startQboStandIn } from '../quickbooks/quickbooks-stand-in.js';
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
 * Issue 46 item 4 in a real browser: the owner closes the books through a day, sees the
 * closed date, downloads the journal in the QuickBooks Online format, and reopens; then connects
 * QuickBooks (the stand-in playing Intuit), sees a record QuickBooks refused with its own words,
 * retries it, and disconnects.
 */
describe('web console: books', () => {
  let server: ConsoleServer;
  let page: Page;
  let owner: TestUser;
  let qbo: QboStandIn;

  beforeAll(async () => {
    qbo = await startQboStandIn();
    server = await startConsole(qbo.env);
    ({ page } = await newPage(server));
    const email = uniqueEmail('owner');
    await signUpInBrowser(page, email, 'Ledger Lawn');
    owner = await ownerFromPage(server, page, email);
  });
  afterAll(async () => {
    await server?.close();
    await qbo?.close();
  });

  it('closes the books, shows the closed date, downloads the journal and reopens', async () => {
    await page.getByRole('link', { name: 'Books' }).click();
    const status = page.getByTestId('closed-through');
    await page.getByText('Nothing is closed.').waitFor();

    const through = addDays(today('UTC'), -10);
    await page.getByLabel('Close through').fill(through);
    await page.getByRole('button', { name: 'Close the books' }).click();
    await page.getByText(`The books are closed through ${through}.`).waitFor();
    expect(await status.textContent()).toContain(through);
    expect((await owner.call('GET', '/api/ledger/close')).json().data.closedThrough).toBe(through);

    await page.getByLabel('From', { exact: true }).fill(addDays(through, -30));
    await page.getByLabel('To', { exact: true }).fill(through);
    await page.getByLabel('Format').selectOption('qbo');
    const link = page.getByRole('link', { name: 'Download the journal' });
    const href = (await link.getAttribute('href')) as string;
    expect(href).toContain('format=qbo');
    const download = await page.request.get(href);
    expect(download.status()).toBe(200);
    expect((await download.text()).split('\n')[0]).toBe(
      'Journal No,Journal Date,Account Name,Debits,Credits,Description,Name',
    );

    // A range the wrong way round is refused in the page, before any request.
    await page.getByLabel('From', { exact: true }).fill(addDays(through, 1));
    await page.getByText('The first day must not be after the last.').waitFor();
    await expectAccessibleControls(page);

    await page.getByRole('button', { name: 'Reopen everything' }).click();
    await page.getByText('Nothing is closed.').waitFor();
    expect((await owner.call('GET', '/api/ledger/close')).json().data.closedThrough).toBeNull();
  });

  it('connects QuickBooks, lists what it refused with its words, retries it and disconnects', async () => {
    const realm = '9345000001';
    // Intuit's consent page: the owner agrees, and Intuit sends the browser back with a code.
    await page.route(`${qbo.env.QUICKBOOKS_OAUTH_BASE}/connect/oauth2**`, async (route) => {
      const asked = new URL(route.request().url());
      qbo.codes.set('console-code', realm);
      const back = new URL(asked.searchParams.get('redirect_uri') as string);
      back.search = new URLSearchParams({
        code: 'console-code',
        state: asked.searchParams.get('state') as string,
        realmId: realm,
      }).toString();
      await route.fulfill({ status: 302, headers: { location: back.toString() } });
    });
    await page.goto('/app/books');
    const status = page.getByTestId('quickbooks-status');
    await status.getByText('Not connected').waitFor();
    // Intuit sends the browser to the callback, which stores the connection and sends it back here.
    const callback = page.waitForResponse(/\/api\/integrations\/quickbooks\/callback/);
    await page.getByRole('button', { name: 'Connect QuickBooks' }).click();
    expect((await callback).status()).toBe(303);
    await page.waitForURL(/\/app\/books$/);
    await status.getByText('Connected', { exact: true }).waitFor();
    expect((await owner.call('GET', '/api/integrations/quickbooks')).json().data).toMatchObject({
      status: 'connected',
      realmId: realm,
    });

    // An invoice dated in a period closed in QuickBooks: refused there, with Intuit's text.
    qbo.closedThrough.set(realm, '2999-12-31');
    const customer = await owner.call('POST', '/api/customers', { firstName: 'Quinn', lastName: 'Books' });
    const invoice = await owner.call('POST', '/api/invoices', {
      customerId: customer.json().data.id,
      lineItems: [{ description: 'Aeration', quantity: 1, unitPrice: 80 }],
    });
    expect((await owner.call('POST', `/api/invoices/${invoice.json().data.id}/send`)).statusCode).toBe(200);
    const deps = makeSyncDeps(server.h.config, server.h.database);
    let clock = Date.now();
    const settle = async () => {
      for (let i = 0; i < 40; i++) {
        await feedAll(server.h);
        clock += 3_600_000;
        const done = await syncJobs(server.h.database, deps, { now: new Date(clock) });
        const { pending } = (await owner.call('GET', '/api/integrations/quickbooks')).json().data;
        if (done === 0 && pending === 0) return;
      }
    };
    await settle();
    await page.goto('/app/books');
    await status.getByText('Connected').waitFor();
    const row = page.getByRole('row', { name: /Invoice/ });
    await row.getByText('The account period has closed').waitFor();
    expect(await row.textContent()).toContain('6210');
    await expectAccessibleControls(page);
    await screenshot(page, 'books-quickbooks');

    qbo.closedThrough.delete(realm);
    await row.getByRole('button', { name: 'Retry' }).click();
    await page.getByText('is sent again.').waitFor();
    await settle();
    await page.goto('/app/books');
    await page.getByText('No failed records.').waitFor();
    expect(qbo.list(realm, 'Invoice')).toHaveLength(1);

    await page.getByRole('button', { name: 'Disconnect QuickBooks' }).click();
    await page.getByText('QuickBooks is disconnected: nothing more is sent.').waitFor();
    await status.getByText('Not connected').waitFor();
    await deps.close();
  });
});
