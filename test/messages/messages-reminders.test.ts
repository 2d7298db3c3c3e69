import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailJobs, messages } from '../../src/db/schema/index.js';
import { sendVisitReminders } from '../../src/modules/jobs/schedules/reminders.tasks.js';
import { sendDueTexts } from '../../src/modules/messages/messages.tasks.js';
import { twilioDeps } from '../../src/modules/messages/messages.twilio.js';
import { addDays, today } from '../../src/platform/dates.js';
import { deviceCaller } from '../crew-tracking/helpers.js';
import { createHarness, type Harness, newTenant } from '../harness.js';
import { startTwilioStandIn, type TwilioStandIn } from './twilio-stand-in.js';

const HOUR = 3_600_000;
let h: Harness;
let stand: TwilioStandIn;

beforeAll(async () => {
  stand = await startTwilioStandIn();
  h = await createHarness(stand.env);
});
afterAll(async () => {
  await h?.close();
  await stand?.close();
});

describe('visit reminders by text', () => {
  it('texts an opted-in customer once per visit when reminderChannels holds "sms", held by the quiet hours', async () => {
    const owner = await newTenant(h, { name: 'Snow Pros' });
    const sid = `AC${'7'.repeat(32)}`;
    const token = 'e'.repeat(32);
    stand.accounts.set(sid, token);
    const settings = await owner.call('PATCH', '/api/settings', {
      twilioAccountSid: sid,
      twilioAuthToken: token,
      smsFrom: '+15005550006',
      smsEnabled: true,
      visitReminderHours: 24,
      reminderChannels: ['sms'],
      smsQuietHours: { start: '21:00', end: '08:00' },
    });
    expect(settings.statusCode, settings.body).toBe(200);
    const c = await owner.call('POST', '/api/customers', {
      firstName: 'Kim',
      phone: '415-555-2691',
      email: 'kim@example.com',
    });
    const customerId = c.json().data.id as string;
    await owner.call('POST', `/api/customers/${customerId}/sms-consent`, { optedIn: true, evidence: 'web form' });
    const date = addDays(today('UTC'), 3);
    const job = await owner.call('POST', '/api/jobs', { customerId, scheduledDate: date, startTime: '10:00' });
    expect(job.statusCode, job.body).toBe(201);
    const jobId = job.json().data.id as string;
    const startsAt = new Date(`${date}T10:00:00Z`);

    // 02:00 (UTC org) the night before: inside the quiet hours, so it waits for 08:00.
    const at = new Date(startsAt.getTime() - 8 * HOUR);
    const texts = twilioDeps(h.config);
    expect(await sendVisitReminders(h.database.db, at, 500, texts)).toBeGreaterThanOrEqual(1);
    expect(await sendVisitReminders(h.database.db, at, 500, texts)).toBe(0);
    const rows = await h.admin.db
      .select()
      .from(messages)
      .where(and(eq(messages.organizationId, owner.organizationId), eq(messages.jobId, jobId)));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: 'visit_reminder', status: 'queued', to: '+14155552691' });
    expect(rows[0]?.sendAfter?.toISOString()).toBe(`${date}T08:00:00.000Z`);
    // Email is not a channel here: no mail.
    const mails = await h.admin.db.select().from(mailJobs).where(eq(mailJobs.documentId, jobId));
    expect(mails).toHaveLength(0);

    await sendDueTexts(h.database, texts, new Date(at.getTime() + HOUR));
    expect(stand.accepted.filter((a) => a.to === '+14155552691')).toHaveLength(0);
    await sendDueTexts(h.database, texts, new Date(startsAt.getTime() - 2 * HOUR + 1));
    const sent = stand.accepted.filter((a) => a.to === '+14155552691');
    expect(sent).toHaveLength(1);
    expect(sent[0]?.body).toContain(`reminder of your visit on ${date} at 10:00`);
  });

  it('on-my-way texts the customer at once with the caller’s first name and the ETA, and adds a job activity', async () => {
    const owner = await newTenant(h, { name: 'Lawn Bros' });
    const sid = `AC${'8'.repeat(32)}`;
    const token = 'd'.repeat(32);
    stand.accounts.set(sid, token);
    await owner.call('PATCH', '/api/settings', {
      twilioAccountSid: sid,
      twilioAuthToken: token,
      smsFrom: '+15005550006',
      smsEnabled: true,
      // Quiet all day: an on-my-way text is not held by them.
      smsQuietHours: { start: '00:00', end: '23:59' },
    });
    const c = await owner.call('POST', '/api/customers', { firstName: 'Lou', phone: '415-555-2692' });
    const customerId = c.json().data.id as string;
    const job = await owner.call('POST', '/api/jobs', { customerId, scheduledDate: today('UTC') });
    const jobId = job.json().data.id as string;

    // No consent yet: skipped, never sent, and the activity says so.
    const skipped = await owner.call('POST', `/api/jobs/${jobId}/on-my-way`, {});
    expect(skipped.statusCode, skipped.body).toBe(200);
    expect(skipped.json().data).toMatchObject({ status: 'skipped', kind: 'on_my_way', jobId });

    await owner.call('POST', `/api/customers/${customerId}/sms-consent`, { optedIn: true });
    const res = await owner.call('POST', `/api/jobs/${jobId}/on-my-way`, { etaMinutes: 20 });
    expect(res.json().data).toMatchObject({ status: 'queued', sendAfter: null });
    expect(res.json().data.body).toBe('Lawn Bros: Test is on the way, about 20 minutes away.');
    await sendDueTexts(h.database, twilioDeps(h.config), new Date(Date.now() + 60_000));
    expect(stand.accepted.filter((a) => a.to === '+14155552692')).toHaveLength(1);
    const activity = (await owner.call('GET', `/api/jobs/${jobId}`)).json().data.activity as { type: string }[];
    expect(activity.filter((a) => a.type === 'on_my_way')).toHaveLength(2);

    const draft = await owner.call('POST', '/api/jobs', { customerId, scheduledDate: today('UTC'), draft: true });
    expect((await owner.call('POST', `/api/jobs/${draft.json().data.id}/on-my-way`, {})).statusCode).toBe(409);
    expect((await owner.call('POST', `/api/jobs/${jobId}/on-my-way`, { etaMinutes: 0 })).statusCode).toBe(400);

    // A crew's phone (a device token) may send it too; it cannot send a manual text.
    const device = await deviceCaller(h, owner);
    const fromPhone = await device.call('POST', `/api/jobs/${jobId}/on-my-way`, { etaMinutes: 5 });
    expect(fromPhone.statusCode, fromPhone.body).toBe(200);
    expect(fromPhone.json().data).toMatchObject({ status: 'queued', kind: 'on_my_way', jobId });
    expect((await device.call('POST', '/api/messages', { customerId, body: 'hi' })).statusCode).toBe(403);
  });
});
