import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobs } from '../../src/db/schema/index.js';
import { createCustomer, createProperty, setSettings } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

const DATE = '2026-05-05';

describe('a crew’s day route', () => {
  let h: Harness;
  let owner: TestUser;
  let crewId: string;
  let jobIds: string[];

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    await setSettings(h, owner.organizationId, { depot: { lat: 39.7, lng: -89.7 } });
    crewId = (await owner.call('POST', '/api/crew-tracking/crews', { name: 'North crew' })).json().data.id;
    const otherCrew = (await owner.call('POST', '/api/crew-tracking/crews', { name: 'South crew' })).json().data.id;
    const customerId = (await createCustomer(h, owner)).id;
    // Stops along a line east of the depot, booked in a zig-zag order.
    jobIds = [];
    for (const lng of [-89.3, -89.6, -89.4, -89.5]) {
      const property = await createProperty(h, owner, customerId, { lat: 39.7, lng });
      const res = await owner.call('POST', '/api/jobs', {
        customerId,
        propertyId: property.id,
        scheduledDate: DATE,
        crewId,
        startTime: `${String(8 + jobIds.length).padStart(2, '0')}:30`,
        durationMinutes: 45,
        services: ['Weekly mowing'],
      });
      expect(res.statusCode, res.body).toBe(201);
      jobIds.push(res.json().data.id);
    }
    await owner.call('POST', '/api/jobs', { customerId, scheduledDate: DATE, crewId: otherCrew });
  });
  afterAll(async () => h?.close());

  it('answers the day in a shorter driving order from the depot, with each leg and the total', async () => {
    const res = await owner.call('GET', '/api/jobs/route', undefined, { query: { date: DATE, crewId } });
    expect(res.statusCode, res.body).toBe(200);
    const route = res.json().data;
    // West to east from the depot: -89.6, -89.5, -89.4, -89.3 (booked as -89.3, -89.6, -89.4, -89.5).
    expect(route.stops.map((s: { jobId: string }) => s.jobId)).toEqual([jobIds[1], jobIds[3], jobIds[2], jobIds[0]]);
    expect(route.stops.map((s: { routeOrder: number }) => s.routeOrder)).toEqual([1, 2, 3, 4]);
    const legs = route.stops.map((s: { distanceKm: number }) => s.distanceKm);
    // 0.1° of longitude at 39.7° N ≈ 8.56 km; the first leg is from the depot (0.1° west of the first stop).
    for (const leg of legs) expect(leg).toBeCloseTo(8.56, 1);
    expect(route.distanceKm).toBeCloseTo(
      legs.reduce((a: number, b: number) => a + b, 0),
      2,
    );
    expect(route.date).toBe(DATE);
    // Each stop says who, where and when, so a crew needs no other call (issue 48).
    const first = route.stops[0];
    expect(first).toMatchObject({
      status: 'scheduled',
      startTime: '09:30',
      durationMinutes: 45,
      services: ['Weekly mowing'],
      customer: { name: expect.stringMatching(/\S/) },
      property: { lat: 39.7, lng: -89.6 },
    });
    expect(first.customer.id).toBe(first.customerId);
    expect(first.property.id).toBe(first.propertyId);
    expect(first.property.address).toMatch(/\S/);
    // Nothing stored by GET.
    const stored = await h.admin.db.select().from(jobs).where(inArray(jobs.id, jobIds));
    expect(stored.every((j) => j.routeOrder === null)).toBe(true);
  });

  it('apply stores routeOrder on each job', async () => {
    const res = await owner.call('POST', '/api/jobs/route/apply', undefined, { query: { date: DATE, crewId } });
    expect(res.statusCode, res.body).toBe(200);
    for (const stop of res.json().data.stops) {
      const [row] = await h.admin.db.select().from(jobs).where(eq(jobs.id, stop.jobId));
      expect(row?.routeOrder).toBe(stop.routeOrder);
    }
    const job = await owner.call('GET', `/api/jobs/${res.json().data.stops[0].jobId}`);
    expect(job.json().data.routeOrder).toBe(1);
  });

  it('refuses a foreign crew, a missing selector and a bad date with 400 naming the field', async () => {
    const other = await newTenant(h, { name: 'Other' });
    const theirs = (await other.call('POST', '/api/crew-tracking/crews', { name: 'Theirs' })).json().data.id;
    for (const [query, field] of [
      [{ date: DATE, crewId: theirs }, 'crewId'],
      [{ date: DATE }, 'crewId'],
      [{ date: '2026-02-30', crewId }, 'date'],
      [{ date: DATE, assignedTo: 'usr_nobody' }, 'assignedTo'],
    ] as const) {
      const res = await owner.call('GET', '/api/jobs/route', undefined, { query: { ...query } });
      expect(res.statusCode, JSON.stringify(query)).toBe(400);
      expect(JSON.stringify(res.json().error.details)).toContain(field);
    }
  });
});
