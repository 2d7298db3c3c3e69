import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, today as todayIn } from '../../src/platform/dates.js';
import { createCustomer } from '../factories.js';
import type { TestUser } from '../harness.js';
import { type ConsoleServer, consoleWithOwner, expectAccessibleControls, screenshot } from './browser.js';

/*
 * Issue 27 item 6 in a real browser: the owner opens the schedules page, sees a weekly
 * mowing schedule in words with its customer and price, opens its next visits, skips
 * one (the API then never makes it), pauses and resumes it.
 */
describe('web console: schedules', () => {
  let server: ConsoleServer;
  let page: Page;
  let owner: TestUser;

  beforeAll(async () => {
    ({ server, page, owner } = await consoleWithOwner('Mow Town'));
  });
  afterAll(async () => {
    await server?.close();
  });

  it('lists schedules in words, shows the next visits, skips one, pauses and resumes', async () => {
    await page.getByRole('link', { name: 'Schedules' }).click();
    await page.getByText('No schedules yet.').waitFor();

    const customer = await createCustomer(server.h, owner, { firstName: 'Robin', lastName: 'Hale' });
    const today = todayIn('UTC');
    const made = await owner.call('POST', '/api/jobs/schedules', {
      customerId: customer.id,
      title: 'Weekly mowing',
      rrule: 'FREQ=WEEKLY;BYDAY=TU',
      startDate: addDays(today, 1),
      startTime: '08:00',
      lineItems: [{ description: 'Mowing', quantity: 1, unitPrice: 45 }],
      billing: { mode: 'per_visit' },
    });
    expect(made.statusCode, made.body).toBe(201);
    const next = made.json().data.nextOccurrences as string[];

    await page.reload();
    const row = page.getByRole('row', { name: /Weekly mowing/ });
    await row.waitFor();
    expect(await row.textContent()).toContain('Robin Hale');
    expect(await row.textContent()).toContain('Every week on Tuesday at 08:00');
    expect(await row.textContent()).toContain('$45.00');
    expect(await row.textContent()).toContain('Each visit');
    await row.getByRole('button', { name: 'Weekly mowing' }).click();

    const visits = page.getByRole('table', { name: 'The next visits of Weekly mowing' });
    await visits.waitFor();
    expect(await visits.getByRole('row').count()).toBe(next.length + 1);
    await expectAccessibleControls(page);

    const second = next[1] as string;
    const label = new Intl.DateTimeFormat('en-US', {
      weekday: 'short',
      month: 'short',
      day: 'numeric',
      year: 'numeric',
      timeZone: 'UTC',
    }).format(new Date(`${second}T00:00:00Z`));
    await page.getByRole('button', { name: `Skip ${label}` }).click();
    await page.getByText(`The visit of ${label} is skipped.`).waitFor();
    await visits
      .getByRole('row', { name: new RegExp(label) })
      .getByText('Skipped')
      .waitFor();
    const schedule = (await owner.call('GET', `/api/jobs/schedules/${made.json().data.id}`)).json().data;
    expect(schedule.skippedDates).toEqual([second]);
    await screenshot(page, 'schedules');

    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByText(/^Paused: \d+ visits? canceled\.$/).waitFor();
    await page
      .getByRole('row', { name: /Weekly mowing/ })
      .getByText('Paused')
      .waitFor();
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByText(/^Resumed: \d+ visits? made\.$/).waitFor();
    // Resuming never makes the skipped visit again.
    await visits
      .getByRole('row', { name: new RegExp(label) })
      .getByText('Skipped')
      .waitFor();

    // Issue 48: its first visit is still ahead (it starts tomorrow), and "End schedule" ends it
    // (it answered 400 "endDate: must not be before startDate").
    await page.getByRole('button', { name: 'End schedule' }).click();
    await page.getByText(/^Ended: \d+ visits? canceled\.$/).waitFor();
    await page
      .getByRole('row', { name: /Weekly mowing/ })
      .getByText('Ended')
      .waitFor();
    const ended = (await owner.call('GET', `/api/jobs/schedules/${made.json().data.id}`)).json().data;
    expect(ended).toMatchObject({ status: 'ended', nextOccurrences: [] });
  });
});
