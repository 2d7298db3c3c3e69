import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crewLatestLocations, crewLocations } from '../../src/db/schema/index.js';
import { purgeOldLocations } from '../../src/modules/crew-tracking/locations.tasks.js';
import { countRows } from '../factories.js';
import { addMember, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { memberIdOf } from './helpers.js';

let h: Harness;
let owner: TestUser;
let member: TestUser;
let other: TestUser;
let memberMem: string;
let ownerMem: string;

beforeAll(async () => {
  h = await createHarness();
  owner = await newTenant(h);
  member = await addMember(h, owner, 'member');
  other = await newTenant(h, { name: 'Other' });
  memberMem = await memberIdOf(owner, member);
  ownerMem = await memberIdOf(owner);
});
afterAll(async () => h?.close());

const at = (secondsAgo: number) => new Date(Date.now() - secondsAgo * 1000).toISOString();
const point = (secondsAgo: number, lat = 41.88, lng = -87.63) => ({
  lat,
  lng,
  accuracy: 5,
  recordedAt: at(secondsAgo),
});

describe('locations', () => {
  it('stores a batch, skips a retried point, and keeps the latest point per member', async () => {
    const first = await member.call('POST', '/api/crew-tracking/locations', {
      points: [point(300, 41.1), point(240, 41.2), point(180, 41.3)],
    });
    expect(first.statusCode).toBe(201);
    expect(first.json().data).toEqual({ accepted: 3, duplicates: 0 });
    // An older batch arriving late must not move the latest point back.
    const late = await member.call('POST', '/api/crew-tracking/locations', { points: [point(600, 40.0)] });
    expect(late.statusCode).toBe(201);
    await owner.call('POST', '/api/crew-tracking/locations', { points: [point(10, 42.0)] });

    const latest = await owner.call('GET', '/api/crew-tracking/locations/latest');
    expect(latest.statusCode).toBe(200);
    const byMember = new Map(latest.json().data.map((p: { memberId: string }) => [p.memberId, p]));
    expect(byMember.get(memberMem)).toMatchObject({ lat: 41.3, userId: member.userId });
    expect(byMember.get(ownerMem)).toMatchObject({ lat: 42 });
    expect((await other.call('GET', '/api/crew-tracking/locations/latest')).json().data).toEqual([]);
  });

  it('returns a trail in a time range, oldest first, with Link next when capped', async () => {
    const res = await owner.call('GET', '/api/crew-tracking/locations', undefined, {
      query: { memberId: memberMem, from: at(3600), to: at(0) },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.map((p: { lat: number }) => p.lat)).toEqual([40, 41.1, 41.2, 41.3]);
    const capped = await owner.call('GET', '/api/crew-tracking/locations', undefined, {
      query: { memberId: memberMem, from: at(3600), to: at(0), limit: '2' },
    });
    expect(capped.json().data).toHaveLength(2);
    const next = /<([^>]+)>; rel="next"/.exec(String(capped.headers.link))?.[1];
    expect(next).toBeDefined();
    const rest = await owner.call('GET', next as string);
    expect(rest.json().data.map((p: { lat: number }) => p.lat)).toEqual([41.2, 41.3]);
    const foreign = await other.call('GET', '/api/crew-tracking/locations', undefined, {
      query: { memberId: memberMem, from: at(3600), to: at(0) },
    });
    expect(foreign.statusCode).toBe(400);
  });

  it('refuses out-of-range coordinates, future points, 501 points and empty batches, writing nothing', async () => {
    const before = await countRows(h, crewLocations, owner.organizationId);
    const post = (points: unknown[]) => member.call('POST', '/api/crew-tracking/locations', { points });
    for (const bad of [
      [point(5, 90.0001)],
      [point(5, -91)],
      [point(5, 0, 180.5)],
      [point(5, 0, -181)],
      [point(5), { ...point(4), recordedAt: new Date(Date.now() + 6 * 60_000).toISOString() }],
      Array.from({ length: 501 }, (_, i) => point(1000 + i)),
      [],
      [{ ...point(5), extra: 1 }],
    ]) {
      const res = await post(bad);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_FAILED');
    }
    expect(await countRows(h, crewLocations, owner.organizationId)).toBe(before);
    const ok = await post(Array.from({ length: 500 }, (_, i) => point(2000 + i)));
    expect(ok.json().data.accepted).toBe(500);
    // A point 4 minutes ahead (a phone clock a little fast) is accepted.
    expect(
      (await post([{ ...point(0), recordedAt: new Date(Date.now() + 4 * 60_000).toISOString() }])).statusCode,
    ).toBe(201);
  });

  it('the worker purge removes points older than 90 days and keeps the rest', async () => {
    const old = new Date(Date.now() - 91 * 86_400_000).toISOString();
    const recent = new Date(Date.now() - 89 * 86_400_000).toISOString();
    await member.call('POST', '/api/crew-tracking/locations', {
      points: [
        { lat: 1, lng: 1, recordedAt: old },
        { lat: 2, lng: 2, recordedAt: recent },
      ],
    });
    const before = await countRows(h, crewLocations, owner.organizationId);
    const removed = await purgeOldLocations(h.database);
    expect(removed).toBe(1);
    expect(await countRows(h, crewLocations, owner.organizationId)).toBe(before - 1);
    expect(await purgeOldLocations(h.database)).toBe(0);
    const [latest] = await h.admin.db
      .select()
      .from(crewLatestLocations)
      .where(eq(crewLatestLocations.memberId, memberMem));
    expect(latest).toBeDefined();
  });

  it('counts a resent batch as duplicates and moves the latest point forward, a point without accuracy too', async () => {
    const post = (points: unknown[]) => owner.call('POST', '/api/crew-tracking/locations', { points });
    const batch = [point(50, 43.1), point(40, 43.2)];
    expect((await post(batch)).json().data).toEqual({ accepted: 2, duplicates: 0 });
    // The phone resends it with one new point: only that one is stored.
    const { accuracy: _, ...bare } = point(1, 43.3, -87.7);
    const again = await post([...batch, bare]);
    expect(again.statusCode).toBe(201);
    expect(again.json().data).toEqual({ accepted: 1, duplicates: 2 });
    const latest = (await owner.call('GET', '/api/crew-tracking/locations/latest')).json().data;
    expect(latest.find((p: { memberId: string }) => p.memberId === ownerMem)).toMatchObject({
      lat: 43.3,
      lng: -87.7,
      accuracy: null,
      recordedAt: bare.recordedAt,
    });
    const trail = await owner.call('GET', '/api/crew-tracking/locations', undefined, {
      query: { memberId: ownerMem, from: at(60), to: at(0) },
    });
    // (The owner's point of the first test may fall in this minute too.)
    const points: Array<{ lat: number; accuracy: number | null }> = trail.json().data;
    expect(points.filter((p) => p.lat > 43).map((p) => [p.lat, p.accuracy])).toEqual([
      [43.1, 5],
      [43.2, 5],
      [43.3, null],
    ]);
  });
});
