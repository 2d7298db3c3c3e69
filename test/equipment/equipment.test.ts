import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { equipment, equipmentAssignments, maintenanceLogs } from '../../src/db/schema/index.js';
import { memberIdOf } from '../crew-tracking/helpers.js';
import { countRows } from '../factories.js';
import { addMember, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

let h: Harness;
let owner: TestUser;
let member: TestUser;
let other: TestUser;
let memberMem: string;

beforeAll(async () => {
  h = await createHarness();
  owner = await newTenant(h);
  member = await addMember(h, owner, 'member');
  other = await newTenant(h, { name: 'Other' });
  memberMem = await memberIdOf(owner, member);
});
afterAll(async () => h?.close());

async function item(fields: Record<string, unknown> = {}) {
  const res = await owner.call('POST', '/api/equipment', { name: 'Mower 1', category: 'mower', ...fields });
  expect(res.statusCode).toBe(201);
  return res.json().data as { id: string; hourMeter: number | null; status: string };
}

const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();

describe('equipment items', () => {
  it('creates, reads, lists, updates and deletes an item; money and meter round-trip', async () => {
    const created = await item({
      make: 'Toro',
      model: 'Z',
      serialNumber: 'SN-1',
      purchaseDate: '2025-04-01',
      purchaseCost: 8999.99,
      hourMeter: 10,
    });
    expect(created).toMatchObject({ status: 'available', hourMeter: 10, purchaseCost: 8999.99, serialNumber: 'SN-1' });
    expect((await member.call('GET', `/api/equipment/${created.id}`)).statusCode).toBe(200);
    const list = await owner.call('GET', '/api/equipment', undefined, { query: { category: 'mower' } });
    expect(list.json().data.map((e: { id: string }) => e.id)).toContain(created.id);
    const patched = await owner.call('PATCH', `/api/equipment/${created.id}`, {
      notes: 'blade sharpened',
      hourMeter: 12,
    });
    expect(patched.json().data).toMatchObject({ notes: 'blade sharpened', hourMeter: 12 });
    expect((await owner.call('DELETE', `/api/equipment/${created.id}`)).statusCode).toBe(204);
    expect((await owner.call('GET', `/api/equipment/${created.id}`)).statusCode).toBe(404);
  });

  it('refuses a duplicate serial number (409 CONFLICT) in the same organization only, writing nothing', async () => {
    await item({ serialNumber: 'DUP-1' });
    const before = await countRows(h, equipment, owner.organizationId);
    const dup = await owner.call('POST', '/api/equipment', { name: 'Other', category: 'plow', serialNumber: 'DUP-1' });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().error.code).toBe('CONFLICT');
    expect(await countRows(h, equipment, owner.organizationId)).toBe(before);
    const second = await item({ serialNumber: 'DUP-2' });
    const patch = await owner.call('PATCH', `/api/equipment/${second.id}`, { serialNumber: 'DUP-1' });
    expect(patch.statusCode).toBe(409);
    const elsewhere = await other.call('POST', '/api/equipment', {
      name: 'X',
      category: 'plow',
      serialNumber: 'DUP-1',
    });
    expect(elsewhere.statusCode).toBe(201);
  });

  it('refuses bad input: unknown category, negative cost, three decimals, a lowered meter (400)', async () => {
    const before = await countRows(h, equipment, owner.organizationId);
    expect((await owner.call('POST', '/api/equipment', { name: 'X', category: 'boat' })).statusCode).toBe(400);
    expect(
      (await owner.call('POST', '/api/equipment', { name: 'X', category: 'mower', purchaseCost: -1 })).statusCode,
    ).toBe(400);
    expect(
      (await owner.call('POST', '/api/equipment', { name: 'X', category: 'mower', purchaseCost: 1.005 })).statusCode,
    ).toBe(400);
    expect(
      (await owner.call('POST', '/api/equipment', { name: 'X', category: 'mower', status: 'in_use' })).statusCode,
    ).toBe(400);
    expect(await countRows(h, equipment, owner.organizationId)).toBe(before);
    const it1 = await item({ hourMeter: 50 });
    const down = await owner.call('PATCH', `/api/equipment/${it1.id}`, { hourMeter: 49.5 });
    expect(down.statusCode).toBe(400);
    expect(down.json().error.details[0].field).toBe('hourMeter');
    expect((await owner.call('PATCH', `/api/equipment/${it1.id}`, { hourMeter: null })).statusCode).toBe(400);
    expect((await owner.call('GET', `/api/equipment/${it1.id}`)).json().data.hourMeter).toBe(50);
    expect((await member.call('POST', '/api/equipment', { name: 'X', category: 'mower' })).statusCode).toBe(403);
  });
});

describe('check-out and check-in', () => {
  it('moves available → in_use → available with history, the meter only forward', async () => {
    const mower = await item({ hourMeter: 100 });
    const out = await member.call('POST', `/api/equipment/${mower.id}/check-out`, { memberId: memberMem });
    expect(out.statusCode).toBe(200);
    expect(out.json().data.status).toBe('in_use');
    const twice = await member.call('POST', `/api/equipment/${mower.id}/check-out`, {});
    expect(twice.statusCode).toBe(409);
    expect(twice.json().error.code).toBe('INVALID_STATE');
    expect(await countRows(h, equipmentAssignments, owner.organizationId)).toBeGreaterThan(0);
    const before = await countRows(h, equipmentAssignments, owner.organizationId);

    const down = await member.call('POST', `/api/equipment/${mower.id}/check-in`, { hourMeter: 99 });
    expect(down.statusCode).toBe(400);
    expect((await owner.call('GET', `/api/equipment/${mower.id}`)).json().data).toMatchObject({
      status: 'in_use',
      hourMeter: 100,
    });
    const back = await member.call('POST', `/api/equipment/${mower.id}/check-in`, { hourMeter: 104.5 });
    expect(back.statusCode).toBe(200);
    expect(back.json().data).toMatchObject({ status: 'available', hourMeter: 104.5 });
    const again = await member.call('POST', `/api/equipment/${mower.id}/check-in`, {});
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('INVALID_STATE');
    expect(await countRows(h, equipmentAssignments, owner.organizationId)).toBe(before);

    const history = await member.call('GET', `/api/equipment/${mower.id}/assignments`);
    expect(history.json().data).toEqual([
      // The member's userId beside memberId (operations.md §4).
      expect.objectContaining({ memberId: memberMem, userId: member.userId, hourMeterOut: 100, hourMeterIn: 104.5 }),
    ]);
    // Taken without a member: no user either.
    expect((await owner.call('POST', `/api/equipment/${mower.id}/check-out`, {})).statusCode).toBe(200);
    const [latest] = (await member.call('GET', `/api/equipment/${mower.id}/assignments`)).json().data;
    expect(latest).toMatchObject({ memberId: null, userId: null });
    expect((await owner.call('POST', `/api/equipment/${mower.id}/check-in`, {})).statusCode).toBe(200);
    // An item with history cannot be deleted: retire it instead.
    const del = await owner.call('DELETE', `/api/equipment/${mower.id}`);
    expect(del.statusCode).toBe(409);
    expect(del.json().error.code).toBe('CONFLICT');
  });

  it('refuses check-out of a retired or maintenance item, and foreign member/crew/job ids', async () => {
    const plow = await item({ category: 'plow' });
    const otherMem = await memberIdOf(other);
    const before = await countRows(h, equipmentAssignments, owner.organizationId);
    for (const body of [{ memberId: otherMem }, { crewId: 'crw_nope' }, { jobId: 'job_nope' }]) {
      const res = await owner.call('POST', `/api/equipment/${plow.id}/check-out`, body);
      expect(res.statusCode).toBe(400);
    }
    expect((await owner.call('PATCH', `/api/equipment/${plow.id}`, { status: 'maintenance' })).statusCode).toBe(200);
    const inShop = await owner.call('POST', `/api/equipment/${plow.id}/check-out`, {});
    expect(inShop.statusCode).toBe(409);
    expect(inShop.json().error.code).toBe('INVALID_STATE');
    expect((await owner.call('PATCH', `/api/equipment/${plow.id}`, { status: 'retired' })).statusCode).toBe(200);
    expect((await owner.call('POST', `/api/equipment/${plow.id}/check-out`, {})).statusCode).toBe(409);
    expect(await countRows(h, equipmentAssignments, owner.organizationId)).toBe(before);
    // in_use is reached only by check-out, and left only by check-in.
    const truck = await item({ category: 'truck' });
    await owner.call('POST', `/api/equipment/${truck.id}/check-out`, {});
    expect((await owner.call('PATCH', `/api/equipment/${truck.id}`, { status: 'retired' })).statusCode).toBe(409);
  });
});

describe('maintenance', () => {
  it('plans by hours or days, logs, and lists what is due, most overdue first', async () => {
    const mower = await item({ name: 'Due mower', hourMeter: 0 });
    const hours = await owner.call('POST', `/api/equipment/${mower.id}/maintenance-plans`, {
      name: 'Oil change',
      everyHours: 50,
    });
    expect(hours.statusCode).toBe(201);
    // Check out a mower, check it in with more hours, and see it on the due list.
    await member.call('POST', `/api/equipment/${mower.id}/check-out`, {});
    await member.call('POST', `/api/equipment/${mower.id}/check-in`, { hourMeter: 75 });

    const truck = await item({ name: 'Due truck', category: 'truck', purchaseDate: '2020-01-01' });
    const days = await owner.call('POST', `/api/equipment/${truck.id}/maintenance-plans`, {
      name: 'Inspection',
      everyDays: 30,
    });
    const log = await member.call('POST', `/api/equipment/${truck.id}/maintenance`, {
      performedAt: daysAgo(45),
      notes: 'Inspected',
      cost: 120.5,
      planId: days.json().data.id,
    });
    expect(log.statusCode).toBe(201);
    expect(log.json().data.cost).toBe(120.5);

    const due = await member.call('GET', '/api/equipment/maintenance-due');
    expect(due.statusCode).toBe(200);
    const rows = due.json().data.filter((r: { equipmentId: string }) => [mower.id, truck.id].includes(r.equipmentId));
    expect(rows.map((r: { planName: string }) => r.planName)).toEqual(['Oil change', 'Inspection']);
    expect(rows[0]).toMatchObject({ basis: 'hours', dueSince: 50, overdueFraction: 0.5 });
    expect(rows[1].basis).toBe('days');
    expect(rows[1].overdueFraction).toBeCloseTo(0.5, 2);
    expect(Date.parse(rows[1].dueSince)).toBeCloseTo(Date.parse(daysAgo(15)), -5);

    // Logging the oil change at 75 h takes it off the list.
    await member.call('POST', `/api/equipment/${mower.id}/maintenance`, {
      performedAt: new Date().toISOString(),
      hourMeter: 75,
      notes: 'Oil changed',
      planId: hours.json().data.id,
    });
    const after = await member.call('GET', '/api/equipment/maintenance-due');
    expect(after.json().data.map((r: { planId: string }) => r.planId)).not.toContain(hours.json().data.id);
    expect((await member.call('GET', `/api/equipment/${mower.id}/maintenance`)).json().data).toHaveLength(1);
    expect((await member.call('GET', `/api/equipment/${mower.id}/maintenance-plans`)).json().data).toHaveLength(1);
  });

  it('counts a days plan from purchase, or from its creation without a purchase date', async () => {
    const old = await item({ name: 'Old blower', category: 'blower', purchaseDate: '2020-01-01' });
    await owner.call('POST', `/api/equipment/${old.id}/maintenance-plans`, { name: 'Yearly', everyDays: 365 });
    const fresh = await item({ name: 'New blower', category: 'blower' });
    await owner.call('POST', `/api/equipment/${fresh.id}/maintenance-plans`, { name: 'Yearly', everyDays: 365 });
    const due = (await owner.call('GET', '/api/equipment/maintenance-due')).json().data;
    const ids = due.map((r: { equipmentId: string }) => r.equipmentId);
    expect(ids).toContain(old.id);
    expect(ids).not.toContain(fresh.id);
    const fractions = due.map((r: { overdueFraction: number }) => r.overdueFraction);
    expect(fractions).toEqual([...fractions].sort((a, b) => b - a));
  });

  it('refuses plans with both or neither interval, logs with a lower meter or a foreign plan (400)', async () => {
    const mower = await item({ hourMeter: 20 });
    const other1 = await item();
    const foreignPlan = (
      await owner.call('POST', `/api/equipment/${other1.id}/maintenance-plans`, { name: 'x', everyDays: 3 })
    ).json().data;
    const plans = `/api/equipment/${mower.id}/maintenance-plans`;
    expect((await owner.call('POST', plans, { name: 'x' })).statusCode).toBe(400);
    expect((await owner.call('POST', plans, { name: 'x', everyDays: 3, everyHours: 5 })).statusCode).toBe(400);
    expect((await owner.call('POST', plans, { name: 'x', everyHours: 0 })).statusCode).toBe(400);
    const before = await countRows(h, maintenanceLogs, owner.organizationId);
    const logs = `/api/equipment/${mower.id}/maintenance`;
    const now = new Date().toISOString();
    expect((await owner.call('POST', logs, { performedAt: now, notes: 'x', hourMeter: 19 })).statusCode).toBe(400);
    expect((await owner.call('POST', logs, { performedAt: now, notes: 'x', planId: foreignPlan.id })).statusCode).toBe(
      400,
    );
    expect((await owner.call('POST', logs, { notes: 'x' })).statusCode).toBe(400);
    expect(await countRows(h, maintenanceLogs, owner.organizationId)).toBe(before);
    expect((await other.call('POST', logs, { performedAt: now, notes: 'x' })).statusCode).toBe(404);
  });
});
