import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, today as todayIn } from '../../src/platform/dates.js';
import { caller } from '../harness.js';
import { weekdays } from '../jobs/schedules-fixture.js';
import {
  type ConsoleServer,
  expectAccessibleControls,
  newPage,
  signUpInBrowser,
  startConsole,
  uniqueEmail,
} from './browser.js';

/* Issue 27 item 6 in a real browser: the Schedules page lists a schedule with its next visits. */
describe('web console: schedules', () => {
  let server: ConsoleServer;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    server = await startConsole();
    ({ context, page } = await newPage(server));
  });
  afterAll(async () => server?.close());

  it('shows each schedule with its next three visits, and a paused one with none', async () => {
    await signUpInBrowser(page, uniqueEmail('owner'));
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const call = caller(server.h.app, { cookie });
    const customer = await call('POST', '/api/customers', { firstName: 'Ruth', lastName: 'Alvarez' });
    expect(customer.statusCode, customer.body).toBe(201);
    const org = (await call('GET', '/api/settings')).json().data;
    const today = todayIn(org.timezone);
    const schedule = (title: string, rrule: string) =>
      call('POST', '/api/jobs/schedules', {
        customerId: customer.json().data.id,
        title,
        rrule,
        startDate: today,
        startTime: '08:00',
        lineItems: [{ description: title, quantity: 1, unitPrice: 45 }],
        billing: { mode: 'none' },
      });
    expect((await schedule('Weekly mowing', 'FREQ=WEEKLY;BYDAY=TU')).statusCode).toBe(201);
    const hedges = (await schedule('Hedge trimming', 'FREQ=MONTHLY;BYMONTHDAY=1')).json().data;
    expect((await call('POST', `/api/jobs/schedules/${hedges.id}/pause`)).statusCode).toBe(200);

    await page.getByRole('link', { name: 'Schedules' }).click();
    const table = page.getByRole('table', { name: 'Schedules and their next visits' });
    await table.waitFor();
    const mowing = table.getByRole('row').filter({ hasText: 'Weekly mowing' });
    const dates = await mowing.locator('time').evaluateAll((els) => els.map((e) => e.getAttribute('datetime')));
    expect(dates).toEqual(weekdays(today, addDays(today, 30), 2).slice(0, 3));
    await expect(mowing.getByText('at 08:00').first().isVisible()).resolves.toBe(true);
    const paused = table.getByRole('row').filter({ hasText: 'Hedge trimming' });
    expect(await paused.innerText()).toContain('none while paused');
    await expectAccessibleControls(page);
  }, 60_000);
});
