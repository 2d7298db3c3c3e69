import { eq } from 'drizzle-orm';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningWorker } from '../../src/background/runner.js';
import { webhookEndpoints } from '../../src/db/schema/index.js';
import { ok200, type Receiver, startReceiver, startWorker } from '../webhooks/helpers.js';
import {
  type ConsoleServer,
  expectAccessibleControls,
  newPage,
  PASSWORD,
  screenshot,
  signUpInBrowser,
  startConsole,
  uniqueEmail,
} from './browser.js';

/*
 * Issue 16 in a real browser: a business owner signs up, adds an endpoint with the
 * keyboard, copies its secret (shown once), watches a delivery die against a receiver
 * answering 500, fixes the receiver and requeues the delivery from the page.
 */
describe('web console: webhooks', () => {
  let server: ConsoleServer;
  let worker: RunningWorker;
  let receiver: Receiver;
  let page: Page;
  const email = uniqueEmail('owner');

  beforeAll(async () => {
    // Two attempts 50 ms apart, then dead.
    server = await startConsole({ WEBHOOK_RETRY_SCHEDULE: '50ms' });
    worker = startWorker(server.h.database, server.h.config);
    receiver = await startReceiver((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('receiver exploded');
    });
    ({ page } = await newPage(server));
  });
  afterAll(async () => {
    await worker?.stop();
    await receiver?.close();
    await server?.close();
  });

  it('serves the console under /app: a redirect from /app, deep links, local assets only', async () => {
    const bare = await fetch(`${server.base}/app`, { redirect: 'manual' });
    expect(bare.status).toBe(302);
    expect(bare.headers.get('location')).toBe('/app/');
    const deep = await fetch(`${server.base}/app/webhooks/whk_whatever`);
    expect(deep.status).toBe(200);
    const html = await deep.text();
    expect(html).toContain('/app/assets/app.js');
    // No CDN: every script and stylesheet is served from this origin.
    expect(html).not.toMatch(/(src|href)="https?:/);
    // Assets come from a fixed list: no path from the URL reaches the file system.
    expect((await fetch(`${server.base}/app/assets/..%2F..%2F..%2Fpackage.json`)).status).toBe(404);
    expect(await (await fetch(`${server.base}/app/assets/../../package.json`)).text()).not.toContain(
      'fieldservice-crm-api',
    );
    expect((await fetch(`${server.base}/app/assets/nothing.js`)).status).toBe(404);
    const doc = (await (await fetch(`${server.base}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/app'))).toEqual([]);
  });

  it('signs up, creates an organization, signs out and signs in again with the keyboard alone', async () => {
    await signUpInBrowser(page, email);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await expectAccessibleControls(page);
    await screenshot(page, 'sign-in');

    await page.getByLabel('Email').focus();
    await page.keyboard.type(email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/app/');
  });

  it('creates an endpoint with the keyboard and shows its secret exactly once', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('button', { name: 'Add endpoint' }).press('Enter');
    await page.getByRole('checkbox', { name: 'invoice.paid' }).waitFor();
    await expectAccessibleControls(page);
    await screenshot(page, 'webhooks-create');

    await page.getByLabel('Endpoint URL').focus();
    await page.keyboard.type(receiver.url);
    await page.keyboard.press('Tab'); // description
    await page.keyboard.press('Tab'); // "All events"
    await page.keyboard.press('Space');
    expect(await page.getByRole('checkbox', { name: /All events/ }).isChecked()).toBe(true);
    await page.keyboard.press('Tab'); // the grouped events are disabled: straight to the submit button
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Create endpoint');
    await page.keyboard.press('Enter');

    const secret = page.getByRole('textbox', { name: /Signing secret for/ });
    await secret.waitFor();
    const value = await secret.inputValue();
    expect(value).toMatch(/^whsec_/);
    await expect.poll(() => page.getByRole('button', { name: 'Copy' }).count()).toBe(1);
    await page.getByRole('row', { name: new RegExp(receiver.url) }).waitFor();
    await screenshot(page, 'webhooks-secret-once');

    await page.getByRole('button', { name: 'I have saved it' }).click();
    await page.reload();
    await page.getByRole('row', { name: new RegExp(receiver.url) }).waitFor();
    expect(await page.content()).not.toContain(value);
    await page.getByRole('link', { name: `Manage ${receiver.url}` }).click();
    await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
    expect(await page.content()).not.toContain(value);
  });

  it('shows a dead delivery with every attempt, then requeues it and sees it succeed', async () => {
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText('A test event (webhook.test) is on its way').waitFor();

    const dead = page.locator('tr[data-status="dead"]');
    await dead.waitFor({ timeout: 30_000 });
    await page.getByRole('combobox', { name: 'Show' }).selectOption('dead');
    await dead.getByRole('button', { name: /^Attempts of webhook.test/ }).click();
    const attempts = page.getByRole('table', { name: /Attempts of delivery/ });
    await attempts.waitFor();
    // Two attempts (one retry), each with its status code, duration and the receiver's answer.
    await expect.poll(() => attempts.locator('tbody tr').count()).toBe(2);
    const first = attempts.locator('tbody tr').first();
    expect(await first.textContent()).toContain('500');
    expect(await first.textContent()).toMatch(/\d+ ms/);
    expect(await first.textContent()).toContain('receiver exploded');
    await expectAccessibleControls(page);
    await screenshot(page, 'webhooks-dead-delivery');

    receiver.respond = ok200;
    await dead.getByRole('button', { name: /^Requeue webhook.test/ }).click();
    await page.getByRole('combobox', { name: 'Show' }).selectOption('');
    await page.locator('tr[data-status="succeeded"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('tr[data-status="dead"]').count()).toBe(0);
    expect(receiver.received.length).toBe(3);
    await screenshot(page, 'webhooks-endpoint');
  });

  it('rotates the secret (shown once) and re-enables a disabled endpoint', async () => {
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const secret = page.getByRole('textbox', { name: 'New signing secret' });
    await secret.waitFor();
    expect(await secret.inputValue()).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'I have saved it' }).click();

    // Deactivated the way ten failed deliveries would leave it.
    const id = decodeURIComponent(new URL(page.url()).pathname.split('/').pop() as string);
    await server.h.admin.db
      .update(webhookEndpoints)
      .set({ active: false, deactivatedAt: new Date(), consecutiveFailures: 10 })
      .where(eq(webhookEndpoints.id, id));
    await page.reload();
    await page.getByText('This endpoint is disabled').waitFor();
    await page.getByRole('button', { name: 'Re-enable' }).click();
    await page.getByText('The endpoint is enabled again').waitFor();
    await page.getByRole('button', { name: 'Re-enable' }).waitFor({ state: 'detached' });
    await page.getByText('This endpoint is disabled').waitFor({ state: 'detached' });
  });
});
