import { addDays, today } from '../../platform/dates.js';
import { AppError } from '../../platform/errors.js';
import { emit } from '../../platform/events/outbox.js';
import type { Ctx } from '../../platform/tenancy.js';
import { addCustomerTag, getCustomer } from '../customers/customers.service.js';
import { createJob } from '../jobs/jobs.service.js';
import { queueMail } from '../mail/mail.service.js';
import { orgTimezone } from '../settings/settings.service.js';
import { renderTemplate } from './workflows.conditions.js';
import type { ActionDef, ActionResultT } from './workflows.schemas.js';

/** The event a run was triggered by. */
export interface TriggerEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

export interface RunDefinition {
  workflowId: string;
  name: string;
  actions: ActionDef[];
}

/**
 * The customer a trigger is about: `data.customerId`, else the `customerId` of the
 * resource carried in the data (`invoice.customerId`, `job.customerId`, …).
 */
export function customerOf(data: Record<string, unknown>): string | undefined {
  if (Object.hasOwn(data, 'customerId') && typeof data.customerId === 'string') return data.customerId;
  for (const value of Object.values(data)) {
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, 'customerId')) {
      const id = (value as Record<string, unknown>).customerId;
      if (typeof id === 'string') return id;
    }
  }
  return undefined;
}

const skipped = (type: string, reason: string): ActionResultT => ({ type, status: 'skipped', error: reason });

/**
 * Runs one action in `ctx` (a tenant transaction whose events carry the run's
 * depth + 1). Returns its result; throws when the action failed, and the caller
 * records `failed` after rolling the action's writes back.
 */
export async function runAction(
  ctx: Ctx,
  def: RunDefinition,
  trigger: TriggerEvent,
  action: ActionDef,
): Promise<ActionResultT> {
  switch (action.type) {
    case 'emit': {
      const event = await emit(ctx, `workflow.${def.name}`, {
        workflow: { id: def.workflowId, name: def.name },
        trigger: { event: trigger.type, eventId: trigger.id },
        data: trigger.data,
      });
      return { type: 'emit', status: 'succeeded', eventId: event.id };
    }
    case 'add_customer_tag': {
      const customerId = customerOf(trigger.data);
      if (!customerId) return skipped(action.type, `${trigger.type} names no customer`);
      const { changed } = await addCustomerTag(ctx, customerId, action.tag);
      return { type: action.type, status: 'succeeded', customerId, changed };
    }
    case 'create_job': {
      const customerId = customerOf(trigger.data);
      if (!customerId) return skipped(action.type, `${trigger.type} names no customer`);
      const scheduledDate = addDays(today(await orgTimezone(ctx)), action.daysFromNow);
      const title = (renderTemplate(action.title, trigger.data).trim() || action.title).slice(0, 200);
      const job = await createJob(ctx, { customerId, scheduledDate, services: [title] });
      return { type: action.type, status: 'succeeded', jobId: job.id };
    }
    case 'email': {
      let to = action.to;
      if (to === 'customer') {
        const customerId = customerOf(trigger.data);
        if (!customerId) return skipped(action.type, `${trigger.type} names no customer`);
        const customer = await getCustomer(ctx, customerId);
        if (!customer.email) return skipped(action.type, 'the customer has no email address');
        to = customer.email;
      }
      // Queued in this action's transaction: it commits with the action's result (exactly once per run),
      // and the worker's mail.deliver sends it with retries.
      await queueMail(ctx, {
        documentType: 'workflow',
        documentId: def.workflowId,
        to: [to],
        subject: renderTemplate(action.subject, trigger.data)
          .replace(/[\r\n]+/g, ' ')
          .slice(0, 998),
        text: renderTemplate(action.body, trigger.data),
      });
      return { type: action.type, status: 'succeeded' };
    }
    default:
      throw new AppError('INTERNAL', `Unknown workflow action ${(action as { type: string }).type}`);
  }
}
