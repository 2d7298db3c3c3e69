import { and, eq } from 'drizzle-orm';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerSmsConsents, messageStatusReports, messages } from '../../src/db/schema/index.js';
import { quietHoursEnd } from '../../src/modules/messages/messages.quiet-hours.js';
import { segmentsOf } from '../../src/modules/messages/messages.segments.js';
import { claimText, sendDueTexts } from '../../src/modules/messages/messages.tasks.js';
import { twilioDeps } from '../../src/modules/messages/messages.twilio.js';
import { countEvents, eventsOf } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { startTwilioStandIn, type TwilioStandIn } from './twilio-stand-in.js';

const BASE_URL = 'https://crm.example.com';
let h: Harness;
let stand: TwilioStandIn;
let accounts = 0;
/** The worker's clock: each call two seconds on, past the per-organization pace. */
let t = Date.now();
const tick = (ms = 2_000) => {
  t = Math.max(t, Date.now()) + ms;
  return new Date(t);
};

const send = (now: Date = tick()) => sendDueTexts(h.database, twilioDeps(h.config), now);

interface Org {
  owner: TestUser;
  token: string;
}

/** A tenant with Twilio configured (its account known to the stand-in) and texting on. */
async function smsTenant(extra: Record<string, unknown> = {}): Promise<Org> {
  const owner = await newTenant(h, { name: 'Green Acres' });
  const sid = `AC${(++accounts).toString(16).padStart(32, '0')}`;
  const token = `${accounts}`.padStart(32, 'f');
  stand.accounts.set(sid, token);
  const res = await owner.call('PATCH', '/api/settings', {
    twilioAccountSid: sid,
    twilioAuthToken: token,
    smsFrom: '+15005550006',
    smsEnabled: true,
    companyPhone: '+1 415 555 0100',
    ...extra,
  });
  expect(res.statusCode, res.body).toBe(200);
  return { owner, token };
}

async function customer(org: Org, phone = '(415) 555-2671', optIn = true) {
  const res = await org.owner.call('POST', '/api/customers', { firstName: 'Dana', lastName: 'Lee', phone });
  expect(res.statusCode, res.body).toBe(201);
  const id = res.json().data.id as string;
  if (optIn) {
    const c = await org.owner.call('POST', `/api/customers/${id}/sms-consent`, {
      optedIn: true,
      evidence: 'signed service agreement',
    });
    expect(c.statusCode, c.body).toBe(200);
  }
  return id;
}

async function text(org: Org, customerId: string, body = 'Mowing tomorrow at 9') {
  const res = await org.owner.call('POST', '/api/messages', { customerId, body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { id: string; status: string };
}

const messageRow = async (org: Org, id: string) => {
  const [row] = await h.admin.db
    .select()
    .from(messages)
    .where(and(eq(messages.organizationId, org.owner.organizationId), eq(messages.id, id)));
  return row as typeof messages.$inferSelect;
};
const rowsOf = (org: Org) =>
  h.admin.db.select().from(messages).where(eq(messages.organizationId, org.owner.organizationId));

/** Posts a form to a Twilio callback path as Twilio would, signed with `token` (none: unsigned). */
function callback(path: string, form: Record<string, string>, token: string | null, signature?: string) {
  const sig = signature ?? (token ? twilio.getExpectedTwilioSignature(token, `${BASE_URL}${path}`, form) : undefined);
  return h.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(sig ? { 'x-twilio-signature': sig } : {}) },
    payload: new URLSearchParams(form).toString(),
  });
}
const statusPath = (org: Org) => `/api/sms/twilio/${org.owner.organizationId}/status`;
const inboundPath = (org: Org) => `/api/sms/twilio/${org.owner.organizationId}/inbound`;
const sentTo = (to: string) => stand.accepted.filter((a) => a.to === to);

beforeAll(async () => {
  stand = await startTwilioStandIn();
  h = await createHarness({ ...stand.env, BASE_URL });
});

afterAll(async () => {
  await h?.close();
  await stand?.close();
});

describe('SMS settings and customers', () => {
  it('keeps the auth token write-only and parses phones with the organization’s country', async () => {
    const org = await smsTenant();
    const s = (await org.owner.call('GET', '/api/settings')).json().data;
    expect(s).toMatchObject({ twilioConfigured: true, smsEnabled: true, country: 'US', reminderChannels: ['email'] });
    expect(JSON.stringify(s)).not.toContain(org.token);
    expect((await org.owner.call('PATCH', '/api/settings', { country: 'XX' })).statusCode).toBe(400);
    expect((await org.owner.call('PATCH', '/api/settings', { smsFrom: '+1555' })).statusCode).toBe(400);

    const id = await customer(org, '(415) 555-2671', false);
    const c = (await org.owner.call('GET', `/api/customers/${id}`)).json().data;
    expect(c.phoneE164).toBe('+14155552671');
    expect(c.smsConsent).toEqual({ status: 'unknown', updatedAt: null, source: null });
    const bad = (await org.owner.call('POST', '/api/customers', { firstName: 'No', phone: '555-01' })).json().data;
    expect(bad.phoneE164).toBeNull();
    // A number written without + in another country's settings.
    await org.owner.call('PATCH', '/api/settings', { country: 'GB' });
    const uk = (await org.owner.call('POST', '/api/customers', { firstName: 'Ann', phone: '07911 123456' })).json()
      .data;
    expect(uk.phoneE164).toBe('+447911123456');
  });

  it('records consent changes with source and evidence, oldest first, and keeps them without the number on anonymize', async () => {
    const org = await smsTenant();
    const id = await customer(org);
    const out = await org.owner.call('POST', `/api/customers/${id}/sms-consent`, {
      optedIn: false,
      evidence: 'asked by phone',
    });
    expect(out.json().data.map((c: { status: string; source: string }) => [c.status, c.source])).toEqual([
      ['opted_in', 'staff'],
      ['opted_out', 'staff'],
    ]);
    expect(out.json().data[0].evidence).toBe('signed service agreement');
    const c = (await org.owner.call('GET', `/api/customers/${id}`)).json().data;
    expect(c.smsConsent).toMatchObject({ status: 'opted_out', source: 'staff' });
    expect((await org.owner.call('POST', `/api/customers/${id}/anonymize`)).statusCode).toBe(200);
    const rows = await h.admin.db.select().from(customerSmsConsents).where(eq(customerSmsConsents.customerId, id));
    expect(rows).toHaveLength(2);
    expect(rows.every((r) => r.phoneE164 === null)).toBe(true);
    expect((await org.owner.call('GET', `/api/customers/${id}/sms-consent`)).json().data).toHaveLength(2);
  });
});

describe('POST /api/messages', () => {
  it('refuses bad bodies, foreign customers, and names what is missing (409)', async () => {
    const org = await smsTenant();
    const other = await smsTenant();
    const id = await customer(org);
    const foreign = await customer(other);
    expect((await org.owner.call('POST', '/api/messages', { customerId: id, body: '' })).statusCode).toBe(400);
    expect((await org.owner.call('POST', '/api/messages', { customerId: id, body: '   ' })).statusCode).toBe(400);
    expect((await org.owner.call('POST', '/api/messages', { customerId: id, body: 'x'.repeat(1601) })).statusCode).toBe(
      400,
    );
    expect((await org.owner.call('POST', '/api/messages', { customerId: foreign, body: 'hi' })).statusCode).toBe(400);

    const noConsent = await customer(org, '(415) 555-2672', false);
    const r1 = await org.owner.call('POST', '/api/messages', { customerId: noConsent, body: 'hi' });
    expect(r1.statusCode).toBe(409);
    expect(r1.json().error).toMatchObject({ code: 'INVALID_STATE' });
    expect(r1.json().error.message).toContain('opted in');
    const noNumber = await customer(org, '555-01');
    const r2 = await org.owner.call('POST', '/api/messages', { customerId: noNumber, body: 'hi' });
    expect(r2.statusCode).toBe(409);
    expect(r2.json().error.message).toContain('phoneE164');
    await org.owner.call('PATCH', '/api/settings', { smsEnabled: false });
    const r3 = await org.owner.call('POST', '/api/messages', { customerId: id, body: 'hi' });
    expect(r3.json().error.message).toContain('smsEnabled');
    expect(await rowsOf(org)).toHaveLength(0);
  });

  it('queues a text (any role), counts its segments, and the worker sends it once with the status callback', async () => {
    const org = await smsTenant();
    const id = await customer(org, '(415) 555-2673');
    const res = await org.owner.call('POST', '/api/messages', {
      customerId: id,
      body: 'é'.repeat(10) + 'ж'.repeat(61),
    });
    expect(res.statusCode).toBe(201);
    const queued = res.json().data;
    expect(queued).toMatchObject({
      status: 'queued',
      direction: 'outbound',
      kind: 'manual',
      segments: 2,
      to: '+14155552673',
    });
    await send();
    await send();
    const sent = sentTo('+14155552673');
    expect(sent).toHaveLength(1);
    expect(sent[0]?.statusCallback).toBe(`${BASE_URL}/api/sms/twilio/${org.owner.organizationId}/status`);
    expect(sent[0]?.from).toBe('+15005550006');
    const one = (await org.owner.call('GET', `/api/messages/${queued.id}`)).json().data;
    expect(one).toMatchObject({ status: 'sent', providerId: sent[0]?.sid });
    expect(one.sentAt).not.toBeNull();
    const list = await org.owner.call('GET', '/api/messages', undefined, {
      query: { status: 'sent', direction: 'outbound' },
    });
    expect(list.json().data.map((m: { id: string }) => m.id)).toEqual([queued.id]);
    const conv = await org.owner.call('GET', `/api/customers/${id}/messages`);
    expect(conv.json().data).toHaveLength(1);
    const other = await smsTenant();
    expect((await other.owner.call('GET', `/api/messages/${queued.id}`)).statusCode).toBe(404);
    expect((await other.owner.call('GET', `/api/customers/${id}/messages`)).statusCode).toBe(404);
  });
});

describe('sending faults', () => {
  it('retries Twilio 429 and 5xx, then succeeds; three failures end failed', async () => {
    const org = await smsTenant();
    const id = await customer(org, '(415) 555-2674');
    const m = await text(org, id);
    stand.script.push(
      { status: 429, code: 20429, message: 'Too Many Requests' },
      { status: 503, code: 20503, message: 'Down' },
    );
    await send();
    expect(await messageRow(org, m.id)).toMatchObject({ status: 'queued', attempts: 1 });
    await send(tick(60_000));
    expect(await messageRow(org, m.id)).toMatchObject({ status: 'queued', attempts: 2 });
    await send(tick(60_000));
    expect(await messageRow(org, m.id)).toMatchObject({ status: 'sent', attempts: 3 });
    expect(sentTo('+14155552674')).toHaveLength(1);

    const m2 = await text(org, id, 'second');
    for (let i = 0; i < 3; i++) stand.script.push({ status: 500, code: 20500, message: 'Internal' });
    for (let i = 0; i < 4; i++) await send(tick(120_000));
    expect(await messageRow(org, m2.id)).toMatchObject({ status: 'failed', attempts: 3, errorCode: '20500' });
    expect(await countEvents(h, org.owner.organizationId, 'message.failed')).toBe(1);
  });

  it('Twilio 21610 fails the text and opts the customer out; an opted-out number is never texted', async () => {
    const org = await smsTenant();
    const id = await customer(org, '(415) 555-2675');
    const m = await text(org, id);
    const later = await text(org, id, 'a later text');
    stand.script.push({ status: 400, code: 21610, message: 'Attempt to send to unsubscribed recipient' });
    await send();
    expect(await messageRow(org, m.id)).toMatchObject({ status: 'failed', errorCode: '21610' });
    const c = (await org.owner.call('GET', `/api/customers/${id}`)).json().data;
    expect(c.smsConsent).toMatchObject({ status: 'opted_out', source: 'keyword' });
    await send();
    expect(await messageRow(org, later.id)).toMatchObject({ status: 'skipped' });
    expect((await messageRow(org, later.id)).errorMessage).toContain('opted out');
    expect(sentTo('+14155552675')).toHaveLength(0);
    expect((await org.owner.call('POST', '/api/messages', { customerId: id, body: 'hi' })).statusCode).toBe(409);
  });

  it('a worker killed after the claim never sends twice: the text ends failed UNKNOWN_OUTCOME', async () => {
    const org = await smsTenant();
    const id = await customer(org, '(415) 555-2676');
    const m = await text(org, id);
    // The claim commits `sending`; the worker "dies" before recording Twilio's answer.
    const claimedAt = tick();
    const claimed = await claimText(h.database, claimedAt);
    expect(claimed?.id).toBe(m.id);
    await send(tick(60_000));
    expect(await messageRow(org, m.id)).toMatchObject({ status: 'sending' });
    await send(new Date(claimedAt.getTime() + 11 * 60_000));
    t = Math.max(t, claimedAt.getTime() + 11 * 60_000);
    expect(await messageRow(org, m.id)).toMatchObject({ status: 'failed', errorCode: 'UNKNOWN_OUTCOME' });
    await send(tick(60 * 60_000));
    expect(sentTo('+14155552676')).toHaveLength(0);

    // Twilio got the request but its answer was lost: failed at once, never sent again.
    const m2 = await text(org, id, 'lost answer');
    stand.script.push('drop');
    const before = stand.requests.length;
    await send();
    await send(tick(60 * 60_000));
    expect(await messageRow(org, m2.id)).toMatchObject({ status: 'failed', errorCode: 'UNKNOWN_OUTCOME' });
    expect(stand.requests.length - before).toBe(1);
  });

  it('hands at most one text a second per organization to Twilio, without holding other organizations', async () => {
    const a = await smsTenant();
    const b = await smsTenant();
    const ca = await customer(a, '(415) 555-2677');
    const cb = await customer(b, '(415) 555-2678');
    for (let i = 0; i < 3; i++) await text(a, ca, `a${i}`);
    await text(b, cb, 'b0');
    const at = tick();
    await send(at);
    expect(sentTo('+14155552677')).toHaveLength(1);
    expect(sentTo('+14155552678')).toHaveLength(1);
    await send(new Date(at.getTime() + 500));
    expect(sentTo('+14155552677')).toHaveLength(1);
    await send(new Date(at.getTime() + 1_001));
    expect(sentTo('+14155552677')).toHaveLength(2);
    t = at.getTime() + 1_001;
  });
});

describe('Twilio callbacks', () => {
  it('a status callback that beats the worker’s commit of the MessageSid is kept and applied, not lost', async () => {
    const org = await smsTenant();
    const id = await customer(org, '(415) 555-2690');
    const m = await text(org, id);
    const answers: number[] = [];
    // Twilio accepts the text and calls back "delivered" before its answer reaches the worker.
    stand.beforeAnswer = async ({ sid, to }) => {
      if (to !== '+14155552690') return;
      const form = { MessageSid: sid, MessageStatus: 'delivered', AccountSid: 'AC', To: to };
      answers.push((await callback(statusPath(org), form, org.token)).statusCode);
      // A repeat before the commit keeps one report, and a late `sent` does not lower it.
      answers.push((await callback(statusPath(org), form, org.token)).statusCode);
      answers.push((await callback(statusPath(org), { ...form, MessageStatus: 'sent' }, org.token)).statusCode);
    };
    try {
      await send();
    } finally {
      stand.beforeAnswer = null;
    }
    expect(answers).toEqual([204, 204, 204]);
    const row = await messageRow(org, m.id);
    expect(row).toMatchObject({ status: 'delivered', providerId: sentTo('+14155552690')[0]?.sid });
    expect(row.deliveredAt).not.toBeNull();
    expect(await countEvents(h, org.owner.organizationId, 'message.delivered')).toBe(1);
    const kept = await h.admin.db
      .select()
      .from(messageStatusReports)
      .where(eq(messageStatusReports.organizationId, org.owner.organizationId));
    expect(kept).toEqual([]);

    // A failure reported early (21610) fails the text and opts the customer out once the id is recorded.
    const m2 = await text(org, id, 'second');
    stand.beforeAnswer = async ({ sid, to }) => {
      if (to !== '+14155552690') return;
      const form = { MessageSid: sid, MessageStatus: 'failed', ErrorCode: '21610', To: to };
      answers.push((await callback(statusPath(org), form, org.token)).statusCode);
    };
    try {
      await send();
    } finally {
      stand.beforeAnswer = null;
    }
    expect(await messageRow(org, m2.id)).toMatchObject({ status: 'failed', errorCode: '21610' });
    const c = (await org.owner.call('GET', `/api/customers/${id}`)).json().data;
    expect(c.smsConsent).toMatchObject({ status: 'opted_out', source: 'keyword' });
    expect(await countEvents(h, org.owner.organizationId, 'message.failed')).toBe(1);
  });

  it('a status for a MessageSid no text can have (none is being sent) writes nothing; kept ones expire', async () => {
    const org = await smsTenant();
    const form = { MessageSid: `SM${'7'.repeat(32)}`, MessageStatus: 'delivered', To: '+14155552691' };
    expect((await callback(statusPath(org), form, org.token)).statusCode).toBe(204);
    const reportsOf = () =>
      h.admin.db
        .select()
        .from(messageStatusReports)
        .where(eq(messageStatusReports.organizationId, org.owner.organizationId));
    expect(await reportsOf()).toEqual([]);

    // A report kept for a text whose worker died (never given the id) is dropped after a day.
    const id = await customer(org, '(415) 555-2691');
    const m = await text(org, id);
    const claimedAt = tick();
    expect((await claimText(h.database, claimedAt))?.id).toBe(m.id);
    expect((await callback(statusPath(org), form, org.token)).statusCode).toBe(204);
    expect(await reportsOf()).toHaveLength(1);
    await send(new Date(claimedAt.getTime() + 11 * 60_000));
    expect(await messageRow(org, m.id)).toMatchObject({ status: 'failed', errorCode: 'UNKNOWN_OUTCOME' });
    expect(await reportsOf()).toHaveLength(1);
    await send(new Date(Date.now() + 25 * 60 * 60_000));
    t = Math.max(t, Date.now() + 25 * 60 * 60_000);
    expect(await reportsOf()).toEqual([]);
  });

  it('status: signature checked (403, nothing written), unknown org 404, unknown MessageSid 204, only forward', async () => {
    const org = await smsTenant();
    const id = await customer(org, '(415) 555-2679');
    const m = await text(org, id);
    await send();
    const sid = (await messageRow(org, m.id)).providerId as string;
    const form = { MessageSid: sid, MessageStatus: 'delivered', AccountSid: 'AC', To: '+14155552679' };

    expect((await callback(statusPath(org), form, null)).statusCode).toBe(403);
    expect((await callback(statusPath(org), form, null, 'bm90IGEgc2lnbmF0dXJl')).statusCode).toBe(403);
    expect((await callback(statusPath(org), form, 'f'.repeat(32))).statusCode).toBe(403);
    expect((await messageRow(org, m.id)).status).toBe('sent');
    expect((await callback('/api/sms/twilio/org_unknown/status', form, org.token)).statusCode).toBe(404);
    // An id no organization can have is unknown too, not a server error.
    for (const path of [
      "/api/sms/twilio/x'%3B%20DROP%20TABLE%20customers%3B%20--/status",
      '/api/sms/twilio/%25/inbound',
    ]) {
      expect((await callback(path, form, org.token)).statusCode, path).toBe(404);
    }
    const unknown = await callback(statusPath(org), { ...form, MessageSid: `SM${'9'.repeat(32)}` }, org.token);
    expect(unknown.statusCode).toBe(204);

    expect((await callback(statusPath(org), form, org.token)).statusCode).toBe(204);
    const delivered = await messageRow(org, m.id);
    expect(delivered.status).toBe('delivered');
    expect(delivered.deliveredAt).not.toBeNull();
    // A repeat and a late `sent` change nothing.
    expect((await callback(statusPath(org), form, org.token)).statusCode).toBe(204);
    expect((await callback(statusPath(org), { ...form, MessageStatus: 'sent' }, org.token)).statusCode).toBe(204);
    expect((await messageRow(org, m.id)).status).toBe('delivered');
    const events = await eventsOf(h, org.owner.organizationId, 'message.delivered');
    expect(events).toHaveLength(1);
    expect(events[0]?.data).toMatchObject({ messageId: m.id, customerId: id });
  });

  it('inbound: recorded for the customer by number, TwiML answer, repeats no-ops, STOP/START/HELP', async () => {
    const org = await smsTenant();
    const id = await customer(org, '(415) 555-2680');
    const inbound = (Body: string, n: number) => ({
      MessageSid: `SM${String(n).padStart(32, 'a')}`,
      From: '+14155552680',
      To: '+15005550006',
      Body,
      AccountSid: 'AC',
    });
    expect((await callback(inboundPath(org), inbound('hi', 1), null)).statusCode).toBe(403);
    expect(await rowsOf(org)).toHaveLength(0);

    const res = await callback(inboundPath(org), inbound('Can you come Friday?', 2), org.token);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/xml');
    expect(res.body).toContain('<Response/>');
    await callback(inboundPath(org), inbound('Can you come Friday?', 2), org.token);
    const conv = (await org.owner.call('GET', `/api/customers/${id}/messages`)).json().data;
    expect(conv).toHaveLength(1);
    expect(conv[0]).toMatchObject({ direction: 'inbound', status: 'received', body: 'Can you come Friday?' });
    const received = await eventsOf(h, org.owner.organizationId, 'message.received');
    expect(received).toHaveLength(1);

    const queued = await text(org, id, 'before the stop');
    await callback(inboundPath(org), inbound('  stop ', 3), org.token);
    let c = (await org.owner.call('GET', `/api/customers/${id}`)).json().data;
    expect(c.smsConsent).toMatchObject({ status: 'opted_out', source: 'keyword' });
    await send();
    expect(await messageRow(org, queued.id)).toMatchObject({ status: 'skipped' });
    expect(sentTo('+14155552680')).toHaveLength(0);
    expect((await org.owner.call('POST', '/api/messages', { customerId: id, body: 'hi' })).statusCode).toBe(409);

    await callback(inboundPath(org), inbound('START', 4), org.token);
    c = (await org.owner.call('GET', `/api/customers/${id}`)).json().data;
    expect(c.smsConsent.status).toBe('opted_in');
    await callback(inboundPath(org), inbound('help', 5), org.token);
    await send();
    const help = sentTo('+14155552680');
    expect(help).toHaveLength(1);
    expect(help[0]?.body).toContain('Green Acres');
    expect(help[0]?.body).toContain('+1 415 555 0100');
    const history = (await org.owner.call('GET', `/api/customers/${id}/sms-consent`)).json().data;
    expect(history.map((x: { status: string; source: string }) => `${x.status}/${x.source}`)).toEqual([
      'opted_in/staff',
      'opted_out/keyword',
      'opted_in/keyword',
    ]);
  });

  it('an inbound text from an unknown number is kept without a customer', async () => {
    const org = await smsTenant();
    const form = { MessageSid: `SM${'b'.repeat(32)}`, From: '+14155550199', To: '+15005550006', Body: 'who is this' };
    expect((await callback(inboundPath(org), form, org.token)).statusCode).toBe(200);
    const rows = await rowsOf(org);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.customerId).toBeNull();
    expect((await callback(inboundPath(org), { Body: 'no sid' }, org.token)).statusCode).toBe(400);
  });
});

describe('segments and quiet hours', () => {
  it('counts GSM-7 and UCS-2 parts', () => {
    expect(segmentsOf('a'.repeat(160))).toBe(1);
    expect(segmentsOf('a'.repeat(161))).toBe(2);
    expect(segmentsOf('a'.repeat(306))).toBe(2);
    expect(segmentsOf('a'.repeat(307))).toBe(3);
    expect(segmentsOf('ж'.repeat(70))).toBe(1);
    expect(segmentsOf('ж'.repeat(71))).toBe(2);
    expect(segmentsOf('ж'.repeat(134))).toBe(2);
    expect(segmentsOf('ж'.repeat(135))).toBe(3);
  });

  it('holds a text made inside the quiet hours until their end, local time', () => {
    const quiet = { start: '21:00', end: '08:00' };
    // 03:00 in Chicago (CST, UTC-6) on 2026-01-15 → 08:00 local the same day.
    expect(quietHoursEnd(new Date('2026-01-15T09:00:00Z'), 'America/Chicago', quiet)?.toISOString()).toBe(
      '2026-01-15T14:00:00.000Z',
    );
    // 22:00 local → 08:00 the next day.
    expect(quietHoursEnd(new Date('2026-01-16T04:00:00Z'), 'America/Chicago', quiet)?.toISOString()).toBe(
      '2026-01-16T14:00:00.000Z',
    );
    expect(quietHoursEnd(new Date('2026-01-15T18:00:00Z'), 'America/Chicago', quiet)).toBeNull();
    expect(quietHoursEnd(new Date('2026-01-15T09:00:00Z'), 'America/Chicago', null)).toBeNull();
  });
});
