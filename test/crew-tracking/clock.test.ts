import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crews, timeEntries } from '../../src/db/schema/index.js';
import { countEvents, countRows, createCustomer, insertJob } from '../factories.js';
import { addMember, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { memberIdOf } from './helpers.js';

let h: Harness;
let owner: TestUser;
let member: TestUser;
let other: TestUser;
let ownerMem: string;
let memberMem: string;
let jobId: string;
let otherJobId: string;

beforeAll(async () => {
  h = await createHarness();
  owner = await newTenant(h);
  member = await addMember(h, owner, 'member');
  other = await newTenant(h, { name: 'Other' });
  ownerMem = await memberIdOf(owner);
  memberMem = await memberIdOf(owner, member);
  const customer = await createCustomer(h, owner);
  jobId = (await insertJob(h, owner, customer.id, 'scheduled')).id;
  const otherCustomer = await createCustomer(h, other);
  otherJobId = (await insertJob(h, other, otherCustomer.id, 'scheduled')).id;
});
afterAll(async () => h?.close());

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

describe('crews', () => {
  it('creates, reads, updates and deletes a crew with member ids and user ids', async () => {
    const created = await owner.call('POST', '/api/crew-tracking/crews', { name: 'Crew A', memberIds: [memberMem] });
    expect(created.statusCode).toBe(201);
    const crew = created.json().data;
    expect(crew).toMatchObject({
      name: 'Crew A',
      memberIds: [memberMem],
      members: [{ memberId: memberMem, userId: member.userId }],
    });
    expect(crew.id).toMatch(/^crw_/);
    expect((await member.call('GET', `/api/crew-tracking/crews/${crew.id}`)).statusCode).toBe(200);
    const list = await member.call('GET', '/api/crew-tracking/crews');
    expect(list.json().data.map((c: { id: string }) => c.id)).toContain(crew.id);
    const patched = await owner.call('PATCH', `/api/crew-tracking/crews/${crew.id}`, {
      memberIds: [ownerMem, memberMem],
    });
    expect(patched.json().data.memberIds).toEqual([ownerMem, memberMem]);
    expect((await owner.call('DELETE', `/api/crew-tracking/crews/${crew.id}`)).statusCode).toBe(204);
    expect((await owner.call('GET', `/api/crew-tracking/crews/${crew.id}`)).statusCode).toBe(404);
  });

  it('refuses a foreign member id (400), a missing name (400) and a member writing (403), writing nothing', async () => {
    const before = await countRows(h, crews, owner.organizationId);
    const otherMem = await memberIdOf(other);
    const foreign = await owner.call('POST', '/api/crew-tracking/crews', { name: 'X', memberIds: [otherMem] });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().error.details[0].field).toBe('memberIds');
    expect((await owner.call('POST', '/api/crew-tracking/crews', { memberIds: [] })).statusCode).toBe(400);
    const byMember = await member.call('POST', '/api/crew-tracking/crews', { name: 'Mine' });
    expect(byMember.statusCode).toBe(403);
    expect(byMember.json().error.code).toBe('FORBIDDEN');
    expect(await countRows(h, crews, owner.organizationId)).toBe(before);
  });
});

describe('clock-in and clock-out', () => {
  it('clocks a work entry in and out and emits time_entry.completed in the same change', async () => {
    const inRes = await member.call('POST', '/api/crew-tracking/clock-in', {
      jobId,
      at: minutesAgo(90),
      location: { lat: 41.88, lng: -87.63 },
    });
    expect(inRes.statusCode).toBe(201);
    const entry = inRes.json().data;
    expect(entry).toMatchObject({ memberId: memberMem, userId: member.userId, jobId, type: 'work', endedAt: null });
    const eventsBefore = await countEvents(h, owner.organizationId, 'time_entry.completed');
    const out = await member.call('POST', '/api/crew-tracking/clock-out', { at: minutesAgo(0) });
    expect(out.statusCode).toBe(200);
    expect(out.json().data.durationMinutes).toBe(90);
    expect(await countEvents(h, owner.organizationId, 'time_entry.completed')).toBe(eventsBefore + 1);
    const { eventsOf } = await import('../factories.js');
    const [evt] = (await eventsOf(h, owner.organizationId, 'time_entry.completed')).slice(-1);
    expect(evt?.data).toMatchObject({
      timeEntryId: entry.id,
      memberId: memberMem,
      jobId,
      durationMinutes: 90,
      startedAt: entry.startedAt,
    });
  });

  it('logs a drive entry with mileage and emits nothing', async () => {
    const before = await countEvents(h, owner.organizationId);
    const inRes = await member.call('POST', '/api/crew-tracking/clock-in', { type: 'drive', at: minutesAgo(30) });
    expect(inRes.statusCode).toBe(201);
    const out = await member.call('POST', '/api/crew-tracking/clock-out', { mileage: 12.5 });
    expect(out.statusCode).toBe(200);
    expect(out.json().data).toMatchObject({ type: 'drive', mileage: 12.5 });
    expect(await countEvents(h, owner.organizationId)).toBe(before);
  });

  it('refuses a second clock-in with 409 CONFLICT, writing nothing', async () => {
    expect((await member.call('POST', '/api/crew-tracking/clock-in', {})).statusCode).toBe(201);
    const rows = await countRows(h, timeEntries, owner.organizationId);
    const second = await member.call('POST', '/api/crew-tracking/clock-in', { jobId });
    expect(second.statusCode).toBe(409);
    expect(second.json().error.code).toBe('CONFLICT');
    expect(await countRows(h, timeEntries, owner.organizationId)).toBe(rows);
    // Concurrent clock-ins: the partial unique index lets exactly one through.
    expect((await member.call('POST', '/api/crew-tracking/clock-out', {})).statusCode).toBe(200);
    const both = await Promise.all([
      member.call('POST', '/api/crew-tracking/clock-in', {}),
      member.call('POST', '/api/crew-tracking/clock-in', {}),
    ]);
    expect(both.map((r) => r.statusCode).sort()).toEqual([201, 409]);
    expect((await member.call('POST', '/api/crew-tracking/clock-out', {})).statusCode).toBe(200);
  });

  it('refuses a clock-out before the clock-in (400), mileage on a work entry (400), none open (409)', async () => {
    const inRes = await member.call('POST', '/api/crew-tracking/clock-in', { at: minutesAgo(10) });
    expect(inRes.statusCode).toBe(201);
    const eventsBefore = await countEvents(h, owner.organizationId);
    const early = await member.call('POST', '/api/crew-tracking/clock-out', { at: minutesAgo(20) });
    expect(early.statusCode).toBe(400);
    expect(early.json().error.details[0].field).toBe('at');
    const mileage = await member.call('POST', '/api/crew-tracking/clock-out', { mileage: 3 });
    expect(mileage.statusCode).toBe(400);
    expect(mileage.json().error.details[0].field).toBe('mileage');
    const still = await h.app.inject({
      method: 'GET',
      url: `/api/crew-tracking/time-entries/${inRes.json().data.id}`,
      headers: { cookie: member.cookie },
    });
    expect(still.json().data.endedAt).toBeNull();
    expect(await countEvents(h, owner.organizationId)).toBe(eventsBefore);
    expect((await member.call('POST', '/api/crew-tracking/clock-out', {})).statusCode).toBe(200);
    const none = await member.call('POST', '/api/crew-tracking/clock-out', {});
    expect(none.statusCode).toBe(409);
    expect(none.json().error.code).toBe('INVALID_STATE');
  });

  it('refuses a foreign job or member id (400), a future start (400), and a member clocking in someone else (403)', async () => {
    const rows = await countRows(h, timeEntries, owner.organizationId);
    const job = await member.call('POST', '/api/crew-tracking/clock-in', { jobId: otherJobId });
    expect(job.statusCode).toBe(400);
    expect(job.json().error.details[0].field).toBe('jobId');
    const otherMem = await memberIdOf(other);
    const foreignMember = await owner.call('POST', '/api/crew-tracking/clock-in', { memberId: otherMem });
    expect(foreignMember.statusCode).toBe(400);
    expect(foreignMember.json().error.details[0].field).toBe('memberId');
    const future = await member.call('POST', '/api/crew-tracking/clock-in', {
      at: new Date(Date.now() + 10 * 60_000).toISOString(),
    });
    expect(future.statusCode).toBe(400);
    const forbidden = await member.call('POST', '/api/crew-tracking/clock-in', { memberId: ownerMem });
    expect(forbidden.statusCode).toBe(403);
    expect((await member.call('POST', '/api/crew-tracking/clock-in', { type: 'lunch' })).statusCode).toBe(400);
    expect(
      (await member.call('POST', '/api/crew-tracking/clock-in', { location: { lat: 91, lng: 0 } })).statusCode,
    ).toBe(400);
    expect(await countRows(h, timeEntries, owner.organizationId)).toBe(rows);
  });

  it('lets an owner clock a member in and out', async () => {
    const inRes = await owner.call('POST', '/api/crew-tracking/clock-in', { memberId: memberMem, at: minutesAgo(5) });
    expect(inRes.statusCode).toBe(201);
    expect(inRes.json().data.memberId).toBe(memberMem);
    const out = await owner.call('POST', '/api/crew-tracking/clock-out', { memberId: memberMem });
    expect(out.statusCode).toBe(200);
  });
});

describe('time entries', () => {
  it('lists with filters and keeps every admin correction in edits', async () => {
    const inRes = await member.call('POST', '/api/crew-tracking/clock-in', { type: 'drive' });
    const id = inRes.json().data.id;
    await member.call('POST', '/api/crew-tracking/clock-out', { mileage: 4 });

    const list = await owner.call('GET', '/api/crew-tracking/time-entries', undefined, {
      query: { memberId: memberMem, type: 'drive', limit: '1' },
    });
    expect(list.statusCode).toBe(200);
    expect(list.json().data[0].id).toBe(id);
    expect(list.headers.link).toContain('rel="next"');
    const byJob = await owner.call('GET', '/api/crew-tracking/time-entries', undefined, { query: { jobId } });
    expect(byJob.json().data.every((e: { jobId: string }) => e.jobId === jobId)).toBe(true);
    const future = await owner.call('GET', '/api/crew-tracking/time-entries', undefined, {
      query: { from: '2099-01-01' },
    });
    expect(future.json().data).toEqual([]);

    const patched = await owner.call('PATCH', `/api/crew-tracking/time-entries/${id}`, { mileage: 5.5, jobId });
    expect(patched.statusCode).toBe(200);
    const edits = patched.json().data.edits;
    expect(edits).toHaveLength(1);
    expect(edits[0]).toMatchObject({
      actorId: owner.userId,
      changes: { mileage: { from: 4, to: 5.5 }, jobId: { from: null, to: jobId } },
    });
    const again = await owner.call('PATCH', `/api/crew-tracking/time-entries/${id}`, { startedAt: minutesAgo(70) });
    expect(again.json().data.edits).toHaveLength(2);
    expect(Object.keys(again.json().data.edits[1].changes)).toEqual(['startedAt']);
  });

  it('refuses corrections that break a rule, by a member, or on another organization', async () => {
    const inRes = await member.call('POST', '/api/crew-tracking/clock-in', { at: minutesAgo(30) });
    const id = inRes.json().data.id;
    await member.call('POST', '/api/crew-tracking/clock-out', {});
    const endBefore = await owner.call('PATCH', `/api/crew-tracking/time-entries/${id}`, { endedAt: minutesAgo(40) });
    expect(endBefore.statusCode).toBe(400);
    const mileage = await owner.call('PATCH', `/api/crew-tracking/time-entries/${id}`, { mileage: 2 });
    expect(mileage.statusCode).toBe(400);
    const foreignJob = await owner.call('PATCH', `/api/crew-tracking/time-entries/${id}`, { jobId: otherJobId });
    expect(foreignJob.statusCode).toBe(400);
    expect((await member.call('PATCH', `/api/crew-tracking/time-entries/${id}`, { type: 'drive' })).statusCode).toBe(
      403,
    );
    expect((await other.call('PATCH', `/api/crew-tracking/time-entries/${id}`, { type: 'drive' })).statusCode).toBe(
      404,
    );
    expect((await owner.call('PATCH', `/api/crew-tracking/time-entries/${id}`, { bogus: 1 })).statusCode).toBe(400);
    const unchanged = await owner.call('GET', `/api/crew-tracking/time-entries/${id}`);
    expect(unchanged.json().data.edits).toEqual([]);
    expect(unchanged.json().data.type).toBe('work');
    expect((await owner.call('DELETE', `/api/crew-tracking/time-entries/${id}`)).statusCode).toBe(204);
    expect((await owner.call('GET', `/api/crew-tracking/time-entries/${id}`)).statusCode).toBe(404);
  });
});
