import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { memberIdOf } from './helpers.js';

let h: Harness;
let owner: TestUser;
let member: TestUser;
let memberMem: string;

beforeAll(async () => {
  h = await createHarness();
  owner = await newTenant(h, { timezone: 'America/Chicago' });
  member = await addMember(h, owner, 'member');
  memberMem = await memberIdOf(owner, member);
});
afterAll(async () => h?.close());

async function entry(type: 'work' | 'drive', startedAt: string, endedAt: string, mileage?: number) {
  const inRes = await owner.call('POST', '/api/crew-tracking/clock-in', { memberId: memberMem, type, at: startedAt });
  expect(inRes.statusCode).toBe(201);
  const out = await owner.call('POST', '/api/crew-tracking/clock-out', {
    memberId: memberMem,
    at: endedAt,
    ...(mileage === undefined ? {} : { mileage }),
  });
  expect(out.statusCode).toBe(200);
}

describe('timesheets in the organization timezone', () => {
  it('splits an entry across the spring-forward midnight in America/Chicago (a 23-hour day)', async () => {
    // 2026-03-07 22:00 CST → 2026-03-08 04:00 CDT: 5 real hours, 2 on the 7th and 3 on the 8th.
    await entry('work', '2026-03-08T04:00:00Z', '2026-03-08T09:00:00Z');
    // A drive on the evening of the 8th crossing into the 9th: mileage counts on the day it started.
    await entry('drive', '2026-03-09T04:30:00Z', '2026-03-09T05:30:00Z', 42.5);
    const res = await owner.call('GET', '/api/crew-tracking/timesheets', undefined, {
      query: { from: '2026-03-01', to: '2026-03-10', memberId: memberMem },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([
      { memberId: memberMem, userId: member.userId, date: '2026-03-07', workMinutes: 120, driveMinutes: 0, mileage: 0 },
      {
        memberId: memberMem,
        userId: member.userId,
        date: '2026-03-08',
        workMinutes: 180,
        driveMinutes: 30,
        mileage: 42.5,
      },
      { memberId: memberMem, userId: member.userId, date: '2026-03-09', workMinutes: 0, driveMinutes: 30, mileage: 0 },
    ]);
  });

  it('clips entries to the range and counts the fall-back day as 25 hours', async () => {
    // 2026-10-31 23:00 CDT → 2026-11-02 01:00 CST: 1 h, 25 h, 1 h.
    await entry('work', '2026-11-01T04:00:00Z', '2026-11-02T07:00:00Z');
    const res = await owner.call('GET', '/api/crew-tracking/timesheets', undefined, {
      query: { from: '2026-11-01', to: '2026-11-01' },
    });
    expect(res.json().data).toEqual([
      {
        memberId: memberMem,
        userId: member.userId,
        date: '2026-11-01',
        workMinutes: 25 * 60,
        driveMinutes: 0,
        mileage: 0,
      },
    ]);
  });

  it('refuses from after to, more than 92 days, and a missing bound (400)', async () => {
    const q = (query: Record<string, string>) =>
      owner.call('GET', '/api/crew-tracking/timesheets', undefined, { query });
    expect((await q({ from: '2026-03-10', to: '2026-03-01' })).statusCode).toBe(400);
    expect((await q({ from: '2026-01-01', to: '2026-04-03' })).statusCode).toBe(400);
    expect((await q({ from: '2026-01-01', to: '2026-04-02' })).statusCode).toBe(200);
    expect((await q({ from: '2026-01-01' })).statusCode).toBe(400);
    expect((await q({ from: '2026-02-30', to: '2026-03-01' })).statusCode).toBe(400);
  });
});
