import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, today } from '../../src/platform/dates.js';
import type { TestUser } from '../harness.js';
import { type ConsoleServer, consoleWithOwner, expectAccessibleControls } from './browser.js';

/*
 * Issue 46 item 4 in a real browser: the owner closes the books through a day, sees the
 * closed date, downloads the journal in the QuickBooks Online format, and reopens.
 */
describe('web console: books', () => {
  let server: ConsoleServer;
  let page: Page;
  let owner: TestUser;

  beforeAll(async () => {
    ({ server, page, owner } = await consoleWithOwner('Ledger Lawn'));
  });
  afterAll(async () => {
    await server?.close();
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
});
