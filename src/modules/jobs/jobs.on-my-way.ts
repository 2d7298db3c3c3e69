import { jobActivity } from '../../db/schema/index.js';
import { stamp } from '../../platform/dates.js';
import { invalidState } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { Ctx } from '../../platform/tenancy.js';
import { memberName } from '../members/members.refs.js';
import { type MessageView, queueAutomaticText } from '../messages/messages.service.js';
import type { TwilioDeps } from '../messages/messages.twilio.js';
import { getOrgSettings } from '../settings/settings.service.js';
import { lockJob } from './jobs.service.js';

const UNDERWAY = new Set(['scheduled', 'in_progress']);

/**
 * `POST /api/jobs/{id}/on-my-way` (operations.md §10): texts the job's customer "<Org>: <first
 * name> is on the way" (+ the ETA) at once (not held by quiet hours), and adds a job activity
 * saying what became of the text (queued, or skipped with the reason). A crew device acts as its
 * member, whose first name the text carries; a caller without a name is "Your crew".
 */
export async function onMyWay(ctx: Ctx, texts: TwilioDeps, jobId: string, etaMinutes?: number): Promise<MessageView> {
  const job = await lockJob(ctx, jobId);
  if (!UNDERWAY.has(job.status)) {
    throw invalidState(`Only a scheduled or in-progress job can send "on my way" (this one is ${job.status})`);
  }
  const settings = await getOrgSettings(ctx);
  const name = ctx.actor.kind === 'user' ? await memberName(ctx, ctx.actor.id) : null;
  const who = name?.trim().split(/\s+/)[0] || 'Your crew';
  const eta = etaMinutes === undefined ? '' : `, about ${etaMinutes} minute${etaMinutes === 1 ? '' : 's'} away`;
  const message = await queueAutomaticText(ctx, texts, {
    customerId: job.customerId,
    body: `${settings.companyName ?? settings.name}: ${who} is on the way${eta}.`,
    kind: 'on_my_way',
    jobId,
    quiet: false,
  });
  if (!message) throw new Error('on-my-way texts have no dedupe key, so one is always made');
  await ctx.tx.insert(jobActivity).values({
    id: newId('jac'),
    organizationId: ctx.organizationId,
    jobId,
    type: 'on_my_way',
    message:
      message.status === 'skipped'
        ? `On the way${eta}; the customer was not texted (${message.errorMessage})`
        : `On the way${eta}; the customer is texted (${message.id})`,
    actorId: ctx.actor.id,
    createdAt: stamp(),
  });
  return message;
}
