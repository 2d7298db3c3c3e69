import { and, eq } from 'drizzle-orm';
import pino from 'pino';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningWorker, startTasks } from '../../src/background/runner.js';
import { messages } from '../../src/db/schema/index.js';
import { sendVisitReminders } from '../../src/modules/jobs/schedules/reminders.tasks.js';
import { sendDueTexts } from '../../src/modules/messages/messages.tasks.js';
import { twilioDeps } from '../../src/modules/messages/messages.twilio.js';
import { workerTasks } from '../../src/modules/tasks.js';
import { addDays, today } from '../../src/platform/dates.js';
import { deviceCaller } from '../crew-tracking/helpers.js';
import { createHarness, type Harness, newTenant } from '../harness.js';
import { ok200, type Receiver, startReceiver, waitFor } from '../webhooks/helpers.js';
import { startTwilioStandIn, type TwilioStandIn } from './twilio-stand-in.js';

/*
 * Issue 44's "done when", as a new owner would try it, against the local Twilio stand-in with
 * two workers running (every task of `npm run worker`, twice, on the test's database: the
 * embedded database has one process, so both run in this one on either database): a customer
 * opts in, the reminder made at 3 a.m. the day before a visit waits for the end of the quiet
 * hours and then reaches the customer, the crew's phone taps "on my way" and the customer gets
 * that text, the customer's reply shows in the conversation and arrives as a signed
 * `message.received` webhook, and after "STOP" no text goes to the number any more.
 */
const BASE_URL = 'https://crm.example.com';
const MOBILE = '+14155552693';
const HOUR = 3_600_000;
/** How long a step may wait for the workers (bounded, not a timing: a loaded machine is slow). */
const PATIENCE = 60_000;

let h: Harness;
let stand: TwilioStandIn;
let receiver: Receiver;
const workers: RunningWorker[] = [];

beforeAll(async () => {
  stand = await startTwilioStandIn();
  receiver = await startReceiver(ok200);
  h = await createHarness({ ...stand.env, BASE_URL });
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await h?.close();
  await receiver?.close();
  await stand?.close();
});

describe('texts, done when (issue 44): opt-in, reminder, on my way, a reply, STOP; two workers', () => {
  it('takes a customer from opting in to STOP with two workers sending', async () => {
    const owner = await newTenant(h, { name: 'Evergreen Lawns' });
    const sid = `AC${'9'.repeat(32)}`;
    const token = 'c'.repeat(32);
    stand.accounts.set(sid, token);
    const settings = await owner.call('PATCH', '/api/settings', {
      timezone: 'UTC',
      twilioAccountSid: sid,
      twilioAuthToken: token,
      smsFrom: '+15005550006',
      smsEnabled: true,
      visitReminderHours: 30,
      reminderChannels: ['sms'],
      smsQuietHours: { start: '21:00', end: '08:00' },
    });
    expect(settings.statusCode, settings.body).toBe(200);
    const hook = await owner.call('POST', '/api/webhooks', { url: receiver.url, events: ['message.received'] });
    expect(hook.statusCode, hook.body).toBe(201);

    // The customer opts in (staff records it, with the evidence).
    const c = await owner.call('POST', '/api/customers', { firstName: 'Ari', phone: '415-555-2693' });
    expect(c.statusCode, c.body).toBe(201);
    const customerId = c.json().data.id as string;
    const consent = await owner.call('POST', `/api/customers/${customerId}/sms-consent`, {
      optedIn: true,
      evidence: 'asked on the phone to be texted the day before each visit',
    });
    expect(consent.statusCode, consent.body).toBe(200);

    // A visit at 09:00 whose day before has passed 08:00 already (so the live workers may send
    // the reminder now) and which has not started yet.
    const now = new Date();
    const visitDate = now.getUTCHours() >= 8 ? addDays(today('UTC'), 1) : today('UTC');
    const job = await owner.call('POST', '/api/jobs', { customerId, scheduledDate: visitDate, startTime: '09:00' });
    expect(job.statusCode, job.body).toBe(201);
    const jobId = job.json().data.id as string;

    // The reminder task at 3 a.m. the day before: the text is made, held to 08:00 (quiet hours),
    // and a send at 03:30 hands nothing to Twilio.
    const dayBefore = addDays(visitDate, -1);
    const threeAm = new Date(`${dayBefore}T03:00:00Z`);
    expect(await sendVisitReminders(h.database.db, threeAm, 500, twilioDeps(h.config))).toBe(1);
    const [reminder] = await h.admin.db
      .select()
      .from(messages)
      .where(and(eq(messages.organizationId, owner.organizationId), eq(messages.jobId, jobId)));
    expect(reminder).toMatchObject({ kind: 'visit_reminder', status: 'queued', to: MOBILE });
    expect(reminder?.sendAfter?.toISOString()).toBe(`${dayBefore}T08:00:00.000Z`);
    await sendDueTexts(h.database, twilioDeps(h.config), new Date(threeAm.getTime() + HOUR / 2));
    expect(stand.accepted.filter((a) => a.to === MOBILE)).toHaveLength(0);

    // Two workers, as `npm run worker` runs them, from now on.
    for (let i = 0; i < 2; i++) {
      workers.push(startTasks(workerTasks, { config: h.config, database: h.database, log: pino({ level: 'silent' }) }));
    }
    const reminderText = await waitFor(
      () => stand.accepted.find((a) => a.to === MOBILE),
      'the reminder handed to Twilio by a worker',
      PATIENCE,
    );
    expect(reminderText.body).toContain(`reminder of your visit on ${visitDate} at 09:00`);

    // The crew taps "on my way" on the phone (a device token): the customer gets that text too.
    const device = await deviceCaller(h, owner);
    const omw = await device.call('POST', `/api/jobs/${jobId}/on-my-way`, { etaMinutes: 20 });
    expect(omw.statusCode, omw.body).toBe(200);
    expect(omw.json().data).toMatchObject({ status: 'queued', kind: 'on_my_way', jobId });
    const onMyWay = await waitFor(
      () => stand.accepted.find((a) => a.to === MOBILE && a.body.includes('on the way')),
      'the on-my-way text handed to Twilio by a worker',
      PATIENCE,
    );
    expect(onMyWay.body).toContain('about 20 minutes');
    const sent = await waitFor(
      async () => {
        const list = (await owner.call('GET', `/api/customers/${customerId}/messages`)).json().data as Array<{
          status: string;
        }>;
        return list.length === 2 && list.every((m) => m.status === 'sent') ? list : undefined;
      },
      'both texts recorded sent',
      PATIENCE,
    );
    expect(sent).toHaveLength(2);

    // The customer replies: Twilio posts it signed against the exact public URL.
    const inbound = (body: string, n: number) => {
      const path = `/api/sms/twilio/${owner.organizationId}/inbound`;
      const form = {
        MessageSid: `SM${String(n).padStart(32, 'd')}`,
        AccountSid: sid,
        From: MOBILE,
        To: '+15005550006',
        Body: body,
      };
      return h.app.inject({
        method: 'POST',
        url: path,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': twilio.getExpectedTwilioSignature(token, `${BASE_URL}${path}`, form),
        },
        payload: new URLSearchParams(form).toString(),
      });
    };
    expect((await inbound('Can you come Friday?', 1)).statusCode).toBe(200);
    const conversation = (await owner.call('GET', `/api/customers/${customerId}/messages`)).json().data as Array<{
      direction: string;
      body: string;
    }>;
    expect(conversation.filter((m) => m.direction === 'inbound')).toEqual([
      expect.objectContaining({ direction: 'inbound', status: 'received', body: 'Can you come Friday?' }),
    ]);
    const delivery = await waitFor(
      () =>
        receiver.received.find(
          (r) => r.headers['x-service-event'] === 'message.received' && r.body.includes('Can you come Friday?'),
        ),
      'the message.received webhook',
      PATIENCE,
    );
    expect(JSON.parse(delivery.body)).toMatchObject({
      event: 'message.received',
      organizationId: owner.organizationId,
      data: { customerId, message: { direction: 'inbound', body: 'Can you come Friday?' } },
    });

    // STOP: the number is opted out, and nothing more goes to it.
    expect((await inbound('STOP', 2)).statusCode).toBe(200);
    const after = (await owner.call('GET', `/api/customers/${customerId}`)).json().data;
    expect(after.smsConsent).toMatchObject({ status: 'opted_out', source: 'keyword' });
    const again = await device.call('POST', `/api/jobs/${jobId}/on-my-way`, { etaMinutes: 5 });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().data).toMatchObject({ status: 'skipped', kind: 'on_my_way' });
    expect((await owner.call('POST', '/api/messages', { customerId, body: 'Friday works' })).statusCode).toBe(409);
    // The workers keep running past the pace: still only the two texts before STOP reached Twilio.
    await sendDueTexts(h.database, twilioDeps(h.config), new Date(Date.now() + 60_000));
    expect(stand.accepted.filter((a) => a.to === MOBILE)).toHaveLength(2);
  }, 240_000);
});
