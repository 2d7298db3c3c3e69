import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { contracts, jobSchedules } from '../../src/db/schema/index.js';
import { activateDueContracts, expireEndedContracts } from '../../src/modules/contracts/contracts.lifecycle.js';
import { addDays, today as todayIn } from '../../src/platform/dates.js';
import { createCustomer } from '../factories.js';
import { newTenant } from '../harness.js';
import { DAY, TZ, useScheduleTenant } from './schedules-fixture.js';

describe('a contract’s schedule follows the contract', () => {
  const t = useScheduleTenant();

  /** A contract signed by the customer, starting in `startsIn` days. */
  const signedContract = async (startsIn: number, endsIn = 200) => {
    const res = await t.owner.call('POST', '/api/contracts', {
      title: 'Weekly mowing',
      customerId: t.customerId,
      startDate: addDays(t.today, startsIn),
      endDate: addDays(t.today, endsIn),
      services: [{ description: 'Weekly mowing', unitPrice: 45, quantity: 26 }],
    });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().data.id as string;
    await t.h.admin.db.update(contracts).set({ status: 'signed' }).where(eq(contracts.id, id));
    return id;
  };
  const scheduleFor = (contractId: string) => t.create('FREQ=DAILY', { contractId, billing: { mode: 'per_visit' } });
  const visits = t.visits;

  it('waits paused until the contract is active, then makes visits from the activation day, not before', async () => {
    const contractId = await signedContract(10);
    const schedule = await scheduleFor(contractId);
    expect(schedule.status).toBe('paused');
    expect(await visits(schedule.id)).toHaveLength(0);
    const resume = await t.owner.call('POST', `/api/jobs/schedules/${schedule.id}/resume`);
    expect(resume.statusCode).toBe(409);

    const startDay = new Date(Date.now() + 10 * DAY);
    await activateDueContracts(t.h.database.db, startDay);
    const [row] = await t.h.admin.db.select().from(jobSchedules).where(eq(jobSchedules.id, schedule.id));
    expect(row?.status).toBe('active');
    const made = await visits(schedule.id);
    expect(made[0]?.scheduledDate).toBe(todayIn(TZ, startDay));
    expect(made.at(-1)?.scheduledDate).toBe(addDays(todayIn(TZ, startDay), 56));

    // The contract expires: the schedule ends, its not-started visits are canceled.
    const afterEnd = new Date(Date.now() + 31 * DAY);
    await t.h.admin.db
      .update(contracts)
      .set({ endDate: addDays(t.today, 30) })
      .where(eq(contracts.id, contractId));
    await expireEndedContracts(t.h.database.db, afterEnd);
    const [ended] = await t.h.admin.db.select().from(jobSchedules).where(eq(jobSchedules.id, schedule.id));
    expect(ended?.status).toBe('ended');
    // Every visit dated on or after the expiry day was canceled; none was deleted.
    const after = await visits(schedule.id);
    expect(after).toHaveLength(made.length);
    const expiryDay = todayIn(TZ, afterEnd);
    const late = after.filter((v) => v.scheduledDate >= expiryDay);
    expect(late.length).toBeGreaterThan(20);
    expect(late.every((v) => v.status === 'canceled')).toBe(true);
    expect(after.filter((v) => v.scheduledDate < expiryDay).every((v) => v.status === 'scheduled')).toBe(true);
    expect(ended?.endDate).toBe(addDays(expiryDay, -1));
  });

  it('ends with a canceled contract, canceling its visits from today on', async () => {
    const contractId = await signedContract(0);
    await activateDueContracts(t.h.database.db);
    const schedule = await scheduleFor(contractId);
    expect(schedule.status).toBe('active');
    expect((await visits(schedule.id)).length).toBe(57);
    const res = await t.owner.call('POST', `/api/contracts/${contractId}/cancel`);
    expect(res.statusCode, res.body).toBe(200);
    const [row] = await t.h.admin.db.select().from(jobSchedules).where(eq(jobSchedules.id, schedule.id));
    expect(row?.status).toBe('ended');
    expect((await visits(schedule.id)).every((v) => v.status === 'canceled')).toBe(true);
  });

  it('refuses a contract of another organization or customer, or one that already has a schedule', async () => {
    const other = await newTenant(t.h, { name: 'Other' });
    const theirCustomer = await createCustomer(t.h, other);
    const theirs = await other.call('POST', '/api/contracts', {
      title: 'x',
      customerId: theirCustomer.id,
      services: [{ description: 'x', unitPrice: 1, quantity: 1 }],
    });
    const contractId = await signedContract(5);
    await scheduleFor(contractId);
    const secondCustomer = (await createCustomer(t.h, t.owner)).id;
    for (const [cid, cus] of [
      [theirs.json().data.id, t.customerId],
      [contractId, secondCustomer],
      [contractId, t.customerId],
    ] as const) {
      const res = await t.owner.call('POST', '/api/jobs/schedules', {
        customerId: cus,
        contractId: cid,
        title: 'Weekly mowing',
        rrule: 'FREQ=WEEKLY;BYDAY=TU',
        startDate: t.today,
        billing: { mode: 'none' },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.details[0].field).toBe('contractId');
    }
  });
});
