import { and, asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobs, mailJobs } from '../../src/db/schema/index.js';
import { sendVisitReminders } from '../../src/modules/jobs/schedules/reminders.tasks.js';
import { today as todayIn } from '../../src/platform/dates.js';
import { createCustomer, setSettings } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

const TZ = 'America/Chicago';
const HOUR = 3_600_000;

describe('visit reminders', () => {
  let h: Harness;
  let owner: TestUser;
  let customerId: string;
  let scheduleId: string;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h, { timezone: TZ });
    customerId = (await createCustomer(h, owner, { email: 'pat@example.com' })).id;
    const res = await owner.call('POST', '/api/jobs/schedules', {
      customerId,
      title: 'Weekly mowing',
      rrule: 'FREQ=WEEKLY;BYDAY=TU',
      startDate: todayIn(TZ),
      startTime: '08:00',
      billing: { mode: 'none' },
    });
    expect(res.statusCode, res.body).toBe(201);
    scheduleId = res.json().data.id;
  });
  afterAll(async () => h?.close());

  const visits = () =>
    h.admin.db.select().from(jobs).where(eq(jobs.scheduleId, scheduleId)).orderBy(asc(jobs.scheduledDate));
  const mailsOf = (jobId: string) =>
    h.admin.db
      .select()
      .from(mailJobs)
      .where(and(eq(mailJobs.documentType, 'job'), eq(mailJobs.documentId, jobId)));

  it('sends nothing while visitReminderHours is off', async () => {
    const [first] = await visits();
    expect(
      await sendVisitReminders(h.database.db, new Date((first as { startsAt: Date }).startsAt.getTime() - HOUR)),
    ).toBe(0);
  });

  it('mails the customer once, the day before, and sets reminderSentAt', async () => {
    await setSettings(h, owner.organizationId, { visitReminderHours: 24 });
    const [first, second] = await visits();
    const startsAt = first?.startsAt as Date;
    // 25 hours ahead: not yet.
    expect(await sendVisitReminders(h.database.db, new Date(startsAt.getTime() - 25 * HOUR))).toBe(0);
    const dayBefore = new Date(startsAt.getTime() - 20 * HOUR);
    expect(await sendVisitReminders(h.database.db, dayBefore)).toBe(1);
    expect(await sendVisitReminders(h.database.db, new Date(startsAt.getTime() - 2 * HOUR))).toBe(0);
    const mails = await mailsOf(first?.id as string);
    expect(mails).toHaveLength(1);
    expect(mails[0]?.to).toEqual(['pat@example.com']);
    expect(mails[0]?.subject).toContain(`${first?.scheduledDate} at 08:00`);
    const [after] = await visits();
    expect(after?.reminderSentAt?.toISOString()).toBe(dayBefore.toISOString());
    expect(await mailsOf(second?.id as string)).toHaveLength(0);
  });

  it('does not remind a skipped visit', async () => {
    const [, second] = await visits();
    const skip = await owner.call('POST', `/api/jobs/schedules/${scheduleId}/skip`, { date: second?.occurrenceDate });
    expect(skip.statusCode).toBe(200);
    expect(
      await sendVisitReminders(h.database.db, new Date((second as { startsAt: Date }).startsAt.getTime() - HOUR)),
    ).toBe(0);
    expect(await mailsOf(second?.id as string)).toHaveLength(0);
  });

  it('two workers at once remind a visit once', async () => {
    const [, , third] = await visits();
    const at = new Date((third as { startsAt: Date }).startsAt.getTime() - 3 * HOUR);
    const counts = await Promise.all([sendVisitReminders(h.database.db, at), sendVisitReminders(h.database.db, at)]);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(1);
    expect(await mailsOf(third?.id as string)).toHaveLength(1);
  });
});
