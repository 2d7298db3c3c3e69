import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { WorkerTask } from '../../../background/runner.js';
import type { Db } from '../../../db/client.js';
import { rowsOf } from '../../../db/client.js';
import { jobs } from '../../../db/schema/index.js';
import { asPlatform, perOrganization } from '../../../platform/cross-tenant.js';
import { take } from '../../../platform/state-machine.js';
import { systemActor } from '../../../platform/tenancy.js';
import { recipientsOf } from '../../billing/document-mail.js';
import { customerName, customersByIds } from '../../customers/customers.refs.js';
import { queueMail } from '../../mail/mail.service.js';
import { queueAutomaticText } from '../../messages/messages.service.js';
import { type TwilioDeps, twilioDeps } from '../../messages/messages.twilio.js';
import { getOrgSettings } from '../../settings/settings.service.js';
import { jobMachine } from '../jobs.states.js';

const SYSTEM = systemActor('visit-reminders');
const BATCH = 500;
const SCHEDULED = take(jobMachine, 'draft', 'publish');

/**
 * Visits starting within their organization's `visitReminderHours` (at startTime,
 * or 08:00 local without one) that were not reminded yet, across organizations.
 * The date bounds let the partial index (scheduled_date, not reminded) do the scan.
 */
async function dueVisits(db: Db, now: Date, limit: number) {
  const at = sql`${now.toISOString()}::timestamptz`;
  const hours = sql`((o.settings->>'visitReminderHours')::int * interval '1 hour')`;
  const startsAt = sql`COALESCE(j.starts_at, (j.scheduled_date + time '08:00') AT TIME ZONE o.timezone)`;
  return rowsOf<{ id: string; organization_id: string }>(
    await asPlatform(db, (tx) =>
      tx.execute(sql`
        SELECT j.id, j.organization_id FROM jobs j
        JOIN organizations o ON o.id = j.organization_id
        WHERE j.reminder_sent_at IS NULL AND j.status = ${SCHEDULED}
          AND jsonb_typeof(o.settings->'visitReminderHours') = 'number'
          AND j.scheduled_date BETWEEN (${at} AT TIME ZONE o.timezone)::date
                                   AND ((${at} + ${hours}) AT TIME ZONE o.timezone)::date
          AND ${startsAt} > ${at} AND ${startsAt} <= ${at} + ${hours}
        ORDER BY j.scheduled_date, j.id
        LIMIT ${limit}`),
    ),
  );
}

/**
 * Mails each due visit's customer once, through the mail outbox. The claim is the
 * conditional UPDATE (reminder_sent_at still NULL, still scheduled): of two workers
 * only one gets the row back, and its mail is queued in that same transaction.
 */
export async function sendVisitReminders(
  db: Db,
  now: Date = new Date(),
  limit = BATCH,
  texts?: TwilioDeps,
): Promise<number> {
  return perOrganization(db, await dueVisits(db, now, limit), SYSTEM, async (ctx, ids) => {
    const organizationId = ctx.organizationId;
    const claimed = await ctx.tx
      .update(jobs)
      .set({ reminderSentAt: now })
      .where(
        and(
          eq(jobs.organizationId, organizationId),
          inArray(jobs.id, ids),
          isNull(jobs.reminderSentAt),
          eq(jobs.status, SCHEDULED),
        ),
      )
      .returning();
    if (claimed.length === 0) return 0;
    const settings = await getOrgSettings(ctx);
    const company = settings.companyName ?? settings.name;
    const byId = await customersByIds(
      ctx,
      claimed.map((j) => j.customerId),
    );
    const channels = settings.reminderChannels;
    for (const job of claimed) {
      const customer = byId.get(job.customerId);
      const when = `${job.scheduledDate}${job.startTime ? ` at ${job.startTime}` : ''}`;
      // By text when the settings name "sms": made once per visit and channel (its key), held by
      // the quiet hours, recorded `skipped` with the reason when the customer cannot be texted.
      if (customer && texts && channels.includes('sms')) {
        await queueAutomaticText(ctx, texts, {
          customerId: customer.id,
          body: `${company}: reminder of your visit on ${when}. Reply to this text if the date does not suit you.`,
          kind: 'visit_reminder',
          jobId: job.id,
          dedupeKey: `visit_reminder:sms:${job.id}`,
          quiet: true,
          now,
        });
      }
      const to = customer ? recipientsOf(customer) : [];
      // No address: nothing to send, but the visit counts as reminded (never retried daily).
      if (!customer || to.length === 0 || !channels.includes('email')) continue;
      await queueMail(ctx, {
        documentType: 'job',
        documentId: job.id,
        to,
        subject: `${company}: reminder of your visit on ${when}`,
        text: `Hello ${customerName(customer)},\n\n${company} will visit on ${when}${job.services.length > 0 ? ` for ${job.services.join(', ')}` : ''}.\n\nReply to this mail if the date does not suit you.`,
      });
    }
    return claimed.length;
  });
}

export const visitReminderTask: WorkerTask = {
  name: 'visit-reminders',
  intervalMs: 5 * 60_000,
  run: ({ database, config }) => sendVisitReminders(database.db, new Date(), BATCH, twilioDeps(config)),
};
