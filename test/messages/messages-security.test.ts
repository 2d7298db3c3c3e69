import { messages } from '../../src/db/schema/index.js';
import { newId } from '../../src/platform/ids.js';
import { inTenant, systemActor } from '../../src/platform/tenancy.js';
import { createCustomer } from '../factories.js';
import { routeSecuritySuite } from '../security.js';

routeSecuritySuite('messages and SMS consent', async (h, owner) => {
  const customer = await createCustomer(h, owner, { phone: '(415) 555-2690', phoneE164: '+14155552690' });
  // An inbound text, seeded as Twilio's callback would record it.
  const id = newId('msg');
  await inTenant(h.database.db, owner.organizationId, systemActor('test'), (ctx) =>
    ctx.tx.insert(messages).values({
      id,
      organizationId: ctx.organizationId,
      customerId: customer.id,
      direction: 'inbound',
      to: '+15005550006',
      from: '+14155552690',
      body: 'Can you come Friday?',
      kind: 'manual',
      status: 'received',
      segments: 1,
    }),
  );
  const job = (await owner.call('POST', '/api/jobs', { customerId: customer.id, scheduledDate: '2026-05-04' })).json()
    .data;
  return [
    { method: 'POST', url: `/api/jobs/${job.id}/on-my-way`, body: {}, crossTenant: true },
    { method: 'GET', url: `/api/customers/${customer.id}/sms-consent`, crossTenant: true },
    { method: 'POST', url: `/api/customers/${customer.id}/sms-consent`, body: { optedIn: true }, crossTenant: true },
    { method: 'POST', url: '/api/messages', body: { customerId: customer.id, body: 'hi' } },
    { method: 'GET', url: '/api/messages' },
    { method: 'GET', url: `/api/messages/${id}`, crossTenant: true },
    { method: 'GET', url: `/api/customers/${customer.id}/messages`, crossTenant: true },
  ];
});
