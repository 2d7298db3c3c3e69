import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, today as todayIn } from '../../src/platform/dates.js';
import { createCustomer, createProperty, setSettings } from '../factories.js';
import type { TestUser } from '../harness.js';
import { type ConsoleServer, consoleWithOwner, expectAccessibleControls, screenshot } from './browser.js';

/*
 * Issue 48, "the console's week": the calendar page shows a week's visits by crew (plus the
 * visits no crew has), each day in route order, skipped and canceled visits marked; it pages
 * from week to week and reads at a phone's width (390 px) as at a desktop's (1280 px).
 */
describe('web console: calendar', () => {
  let server: ConsoleServer;
  let page: Page;
  let owner: TestUser;
  let monday: string;
  const day = (n: number) => addDays(monday, n);

  const ok = async (method: string, url: string, body?: unknown, status = 200) => {
    const res = await owner.call(method, url, body);
    expect(res.statusCode, `${method} ${url} ${res.body}`).toBe(status);
    return res.json().data;
  };

  beforeAll(async () => {
    ({ server, page, owner } = await consoleWithOwner('Week Lawn'));
    // Next week: every date ahead of today in any timezone.
    const today = todayIn('UTC');
    const weekday = new Date(`${today}T00:00:00Z`).getUTCDay();
    monday = addDays(today, 7 - ((weekday + 6) % 7));

    const crewA = await ok('POST', '/api/crew-tracking/crews', { name: 'Crew A' }, 201);
    const crewB = await ok('POST', '/api/crew-tracking/crews', { name: 'Crew B' }, 201);
    await setSettings(server.h, owner.organizationId, { depot: { lat: 41.88, lng: -87.3 } });

    // Crew A's Tuesday: three neighbours booked by time in a zig-zag along the street; the route
    // from the depot (east) runs Kim (-87.40), Novak (-87.50), Ortiz (-87.60).
    const stops: Array<[first: string, last: string, street: string, lng: number, time: string]> = [
      ['Sam', 'Ortiz', '910 W Lake St', -87.6, '08:00'],
      ['Ana', 'Kim', '920 W Lake St', -87.4, '09:00'],
      ['Joe', 'Novak', '930 W Lake St', -87.5, '10:00'],
    ];
    for (const [firstName, lastName, street, lng, startTime] of stops) {
      const c = await createCustomer(server.h, owner, { firstName, lastName });
      const p = await createProperty(server.h, owner, c.id, { street, city: 'Chicago', lat: 41.88, lng });
      await ok(
        'POST',
        '/api/jobs',
        {
          customerId: c.id,
          propertyId: p.id,
          scheduledDate: day(1),
          startTime,
          crewId: crewA.id,
          services: ['Mowing'],
        },
        201,
      );
    }
    const applied = await owner.call('POST', `/api/jobs/route/apply?date=${day(1)}&crewId=${crewA.id}`);
    expect(applied.statusCode, applied.body).toBe(200);

    // Crew B mows the Hales every weekday; Thursday is skipped.
    const hale = await createCustomer(server.h, owner, { firstName: 'Robin', lastName: 'Hale' });
    const sch = await ok(
      'POST',
      '/api/jobs/schedules',
      {
        customerId: hale.id,
        title: 'Daily mowing',
        rrule: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR',
        startDate: monday,
        endDate: day(6),
        startTime: '07:30',
        crewId: crewB.id,
        billing: { mode: 'none' },
      },
      201,
    );
    await ok('POST', `/api/jobs/schedules/${sch.id}/skip`, { date: day(3) });

    // No crew: a one-off on Friday, called off.
    const lee = await createCustomer(server.h, owner, { firstName: 'Ann', lastName: 'Lee' });
    const oneOff = await ok(
      'POST',
      '/api/jobs',
      { customerId: lee.id, scheduledDate: day(4), startTime: '13:00', services: ['Leaf cleanup'] },
      201,
    );
    await ok('PUT', `/api/jobs/${oneOff.id}`, { status: 'canceled' });
  });
  afterAll(async () => {
    await server?.close();
  });

  const cell = (crew: string, date: string) =>
    page.getByRole('cell', {
      name: `${crew}, ${new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', weekday: 'short', month: 'short', day: 'numeric' }).format(new Date(`${date}T00:00:00Z`))}`,
      exact: true,
    });

  it('shows the week by crew, each day in route order, skipped and canceled visits marked', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByRole('link', { name: 'Calendar' }).click();
    await page.getByRole('heading', { name: /^Week of / }).waitFor();
    await page.goto(`/app/calendar?week=${day(2)}`); // any day of the week opens its Monday
    const grid = page.getByRole('table', { name: /^Visits by crew/ });
    await grid.waitFor();
    expect(await grid.getByRole('rowheader').allTextContents()).toEqual([
      'Crew A 3 visits',
      'Crew B 4 visits',
      'No crew 0 visits',
    ]);

    // Route order, not booking time: Kim, Novak, Ortiz, numbered 1 to 3.
    const tuesday = cell('Crew A', day(1));
    expect(await tuesday.locator('.visit-who').allTextContents()).toEqual(['Ana Kim', 'Joe Novak', 'Sam Ortiz']);
    expect(await tuesday.locator('.visit-order').allTextContents()).toEqual(['1', '2', '3']);
    expect(await tuesday.textContent()).toContain('920 W Lake St');

    // Crew B: Monday to Friday, Thursday skipped (struck through, labelled).
    for (const n of [0, 1, 2, 4]) expect(await cell('Crew B', day(n)).textContent()).toContain('Robin Hale');
    const thursday = cell('Crew B', day(3));
    await thursday.getByText('Skipped').waitFor();
    expect(
      await thursday.locator('.visit-skipped .visit-who').evaluate((e) => getComputedStyle(e).textDecorationLine),
    ).toBe('line-through');
    const friday = cell('No crew', day(4));
    await friday.getByText('Canceled').waitFor();
    expect(await friday.textContent()).toContain('Ann Lee');
    expect(await cell('Crew A', day(5)).locator('.visit').count()).toBe(0);
    await expectAccessibleControls(page);
    await screenshot(page, 'calendar');

    // The next week is empty (the schedule ended on Sunday); back again.
    await page.getByRole('button', { name: 'Next week' }).click();
    await page.getByText('0 visits this week.').waitFor();
    expect(page.url()).toContain(`week=${day(7)}`);
    await page.getByRole('button', { name: 'Previous week' }).click();
    await page.getByText('7 visits this week.').waitFor();
  });

  it('reads at a phone’s width: one card per crew, days down, nothing wider than the screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`/app/calendar?week=${monday}`);
    await page.getByText('7 visits this week.').waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const tuesday = cell('Crew A', day(1));
    expect(await tuesday.locator('.cal-cell-day').isVisible()).toBe(true);
    const box = await tuesday.boundingBox();
    expect(box?.width ?? 0).toBeGreaterThan(300); // a day spans the card, not a seventh of it
    // Empty days are left out on a phone.
    expect(await cell('Crew A', day(5)).isVisible()).toBe(false);
    await screenshot(page, 'calendar-phone');
  });
});
