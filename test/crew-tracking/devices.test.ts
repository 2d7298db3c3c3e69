import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceTokens, timeEntries } from '../../src/db/schema/index.js';
import { countEvents, countRows, createCustomer } from '../factories.js';
import { addMember, createHarness, type Harness, newTenant, setPlan, type TestUser } from '../harness.js';
import { deviceCaller, memberIdOf } from './helpers.js';

let h: Harness;
let owner: TestUser;
let member: TestUser;
let memberMem: string;

beforeAll(async () => {
  h = await createHarness();
  owner = await newTenant(h, { plan: 'starter' });
  member = await addMember(h, owner, 'member');
  memberMem = await memberIdOf(owner, member);
});
afterAll(async () => h?.close());

/** A device's scope, read independently of platform/auth/scopes.ts: operations.md §4 (and §10's on-my-way) in words. */
function inDeviceScope(method: string, url: string): boolean {
  if (url === '/api/crew-tracking/devices' || url.startsWith('/api/crew-tracking/devices/')) return false;
  if (url.startsWith('/api/crew-tracking/')) return true;
  if (method === 'POST' && url === '/api/jobs/:id/on-my-way') return true;
  return (method === 'GET' || method === 'HEAD') && (url === '/api/jobs' || url.startsWith('/api/jobs/'));
}

describe('mobile device tokens', () => {
  it('are shown once, stored hashed, listed without tokens, and act as their member on a starter plan', async () => {
    const device = await deviceCaller(h, owner, memberMem);
    expect(device.token).toMatch(/^dev_[A-Za-z0-9_-]{40,}$/);
    expect(device.memberId).toBe(memberMem);
    const [stored] = await h.admin.db.select().from(deviceTokens).where(eq(deviceTokens.id, device.id));
    expect(stored?.tokenHash).not.toContain(device.token);
    expect(JSON.stringify(stored)).not.toContain(device.token);
    const list = await owner.call('GET', '/api/crew-tracking/devices');
    expect(list.body).not.toContain(device.token);
    expect(list.json().data.map((d: { id: string }) => d.id)).toContain(device.id);

    // The "new user" walk-through: clock in to a job, post points, clock out, get time_entry.completed.
    const customer = await createCustomer(h, owner);
    const job = await owner.call('POST', '/api/jobs', { customerId: customer.id, scheduledDate: '2026-05-04' });
    expect((await device.call('GET', `/api/jobs/${job.json().data.id}`)).statusCode).toBe(200);
    const inRes = await device.call('POST', '/api/crew-tracking/clock-in', { jobId: job.json().data.id });
    expect(inRes.statusCode).toBe(201);
    expect(inRes.json().data.memberId).toBe(memberMem);
    const points = await device.call('POST', '/api/crew-tracking/locations', {
      points: [{ lat: 41.9, lng: -87.6, recordedAt: new Date().toISOString() }],
    });
    expect(points.statusCode).toBe(201);
    const before = await countEvents(h, owner.organizationId, 'time_entry.completed');
    expect((await device.call('POST', '/api/crew-tracking/clock-out', {})).statusCode).toBe(200);
    expect(await countEvents(h, owner.organizationId, 'time_entry.completed')).toBe(before + 1);
    // A device acts with its member's role: a member's device cannot correct time entries.
    const entry = inRes.json().data.id;
    expect((await device.call('PATCH', `/api/crew-tracking/time-entries/${entry}`, { type: 'drive' })).statusCode).toBe(
      403,
    );
  });

  it("keeps Idempotency-Keys per device: its member reusing the key is refused, not replayed the device's answer", async () => {
    const device = await deviceCaller(h, owner, memberMem);
    const key = { headers: { 'idempotency-key': 'points-1' } };
    const body = { points: [{ lat: 41.9, lng: -87.6, recordedAt: new Date().toISOString() }] };
    expect((await device.call('POST', '/api/crew-tracking/locations', body, key)).statusCode).toBe(201);
    const replay = await device.call('POST', '/api/crew-tracking/locations', body, key);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const byMember = await member.call('POST', '/api/crew-tracking/locations', body, key);
    expect(byMember.statusCode).toBe(422);
    expect(byMember.json().error.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('answers 403 on every registered route outside its scope and never 401/403 inside it (route-table sweep)', async () => {
    // The owner's own device: it acts with the owner role, so no role rule can explain a 403 inside the scope.
    const device = await deviceCaller(h, owner);
    await setPlan(h, owner.organizationId, 'business');
    const problems: string[] = [];
    let inside = 0;
    let outside = 0;
    for (const route of h.app.registeredRoutes) {
      if (!route.url.startsWith('/api/') || route.method === 'OPTIONS' || route.access === 'public') continue;
      const url = route.url.replace(/:[A-Za-z0-9_]+/g, 'x_1').replace('*', 'x');
      const res = await device.call(
        route.method,
        url,
        route.method === 'GET' || route.method === 'HEAD' ? undefined : {},
      );
      // HEAD answers carry no body; the status alone tells.
      const code = res.body
        ? (res.json().error?.code ?? '')
        : route.method === 'HEAD' && res.statusCode === 403
          ? 'FORBIDDEN'
          : '';
      const label = `${route.method} ${route.url}: ${res.statusCode} ${code}`;
      if (inDeviceScope(route.method, route.url)) {
        inside++;
        if (res.statusCode === 401 || res.statusCode === 403) problems.push(`inside scope ${label}`);
      } else {
        outside++;
        if (res.statusCode !== 403 || code !== 'FORBIDDEN') problems.push(`outside scope ${label}`);
      }
    }
    expect(problems).toEqual([]);
    expect(inside).toBeGreaterThan(10);
    expect(outside).toBeGreaterThan(30);
    await setPlan(h, owner.organizationId, 'starter');
  });

  it('stops working at once when revoked (401), and a revoked token writes nothing', async () => {
    const device = await deviceCaller(h, member);
    expect(device.memberId).toBe(memberMem);
    expect((await device.call('GET', '/api/crew-tracking/locations/latest')).statusCode).toBe(200);
    const revoke = await member.call('DELETE', `/api/crew-tracking/devices/${device.id}`);
    expect(revoke.statusCode).toBe(204);
    const rows = await countRows(h, timeEntries, owner.organizationId);
    const after = await device.call('POST', '/api/crew-tracking/clock-in', {});
    expect(after.statusCode).toBe(401);
    expect(after.json().error.code).toBe('UNAUTHENTICATED');
    expect(await countRows(h, timeEntries, owner.organizationId)).toBe(rows);
    expect((await member.call('DELETE', `/api/crew-tracking/devices/${device.id}`)).statusCode).toBe(404);
  });

  it('lets a member create a device only for themself, and see and revoke only their own', async () => {
    const ownerMem = await memberIdOf(owner);
    const forOwner = await member.call('POST', '/api/crew-tracking/devices', { name: 'x', memberId: ownerMem });
    expect(forOwner.statusCode).toBe(403);
    const ownerDevice = await deviceCaller(h, owner);
    const list = await member.call('GET', '/api/crew-tracking/devices');
    expect(list.json().data.every((d: { memberId: string }) => d.memberId === memberMem)).toBe(true);
    expect((await member.call('DELETE', `/api/crew-tracking/devices/${ownerDevice.id}`)).statusCode).toBe(404);
    expect((await ownerDevice.call('GET', '/api/crew-tracking/time-entries')).statusCode).toBe(200);
    // A device cannot mint or list devices, nor reach owner routes.
    expect((await ownerDevice.call('POST', '/api/crew-tracking/devices', { name: 'y' })).statusCode).toBe(403);
    expect((await ownerDevice.call('GET', '/api/settings')).statusCode).toBe(403);
  });

  it('stops working when its member leaves the organization', async () => {
    const leaver = await addMember(h, owner, 'member');
    const leaverMem = await memberIdOf(owner, leaver);
    const device = await deviceCaller(h, owner, leaverMem);
    expect((await device.call('GET', '/api/jobs')).statusCode).toBe(200);
    expect((await owner.call('DELETE', `/api/members/${leaverMem}`)).statusCode).toBe(204);
    h.app.deps.resolver.invalidate();
    expect((await device.call('GET', '/api/jobs')).statusCode).toBe(401);
  });
});
