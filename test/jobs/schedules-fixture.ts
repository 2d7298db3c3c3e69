import { asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect } from 'vitest';
import { jobs } from '../../src/db/schema/index.js';
import { addDays, today as todayIn } from '../../src/platform/dates.js';
import { createCustomer } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/** The schedules tests' organization runs on Chicago time (daylight saving included). */
export const TZ = 'America/Chicago';
export const DAY = 86_400_000;

/** The dates from `from` to `to` (inclusive) falling on `weekday` (0 = Sunday), computed without rrule. */
export function weekdays(from: string, to: string, weekday: number): string[] {
  const out: string[] = [];
  for (let d = from; d <= to; d = addDays(d, 1)) {
    if (new Date(`${d}T00:00:00Z`).getUTCDay() === weekday) out.push(d);
  }
  return out;
}

export interface ScheduleTenant {
  h: Harness;
  owner: TestUser;
  customerId: string;
  /** Today in TZ when the file started. */
  today: string;
  /** The schedule's visits (any status), by date. */
  visits(scheduleId: string): Promise<Array<typeof jobs.$inferSelect>>;
  /** POST /api/jobs/schedules for the customer from today, 08:00, no billing; answers the schedule. */
  create(rrule: string, fields?: Record<string, unknown>): Promise<{ id: string; status: string }>;
}

/**
 * One harness per test file with an organization in TZ and a customer, closed after
 * the file: the set-up every schedules test file starts from.
 */
export function useScheduleTenant(): ScheduleTenant {
  const t = {} as ScheduleTenant;
  t.visits = (scheduleId: string) =>
    t.h.admin.db
      .select()
      .from(jobs)
      .where(eq(jobs.scheduleId, scheduleId))
      .orderBy(asc(jobs.scheduledDate), asc(jobs.id));
  t.create = async (rrule: string, fields: Record<string, unknown> = {}) => {
    const res = await t.owner.call('POST', '/api/jobs/schedules', {
      customerId: t.customerId,
      title: 'Weekly mowing',
      rrule,
      startDate: t.today,
      startTime: '08:00',
      billing: { mode: 'none' },
      ...fields,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data;
  };
  beforeAll(async () => {
    t.h = await createHarness();
    t.owner = await newTenant(t.h, { timezone: TZ });
    t.customerId = (await createCustomer(t.h, t.owner)).id;
    t.today = todayIn(TZ);
  });
  afterAll(async () => t.h?.close());
  return t;
}
