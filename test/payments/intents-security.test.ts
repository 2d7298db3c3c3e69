import { paymentIntents } from '../../src/db/schema/index.js';
import { createCustomer } from '../factories.js';
import { routeSecuritySuite } from '../security.js';
import { pay, sentInvoice } from './helpers.js';

// POST /api/portal/{token}/pay is public by design (the link's token is the credential): see intents.test.ts.
routeSecuritySuite('payment intents, deposits, reconciliation', async (h, owner) => {
  const c = await createCustomer(h, owner);
  const inv = await sentInvoice(owner, c.id, 100);
  const cash = await pay(owner, inv, 40, 'cash');
  const dep = await owner.call('POST', '/api/payments/deposits', {
    depositDate: '2026-01-01',
    paymentIds: [cash],
  });
  if (dep.statusCode !== 201) throw new Error(dep.body);
  // Seeded directly: creating one needs Stripe, which intents.test.ts drives.
  const intentId = 'pint_security000000000000000001';
  await h.admin.db.insert(paymentIntents).values({
    id: intentId,
    organizationId: owner.organizationId,
    invoiceId: inv,
    amountCents: 6000,
    currency: 'USD',
    status: 'requires_payment_method',
    processorIntentId: 'pi_security1',
    clientSecret: 'pi_security1_secret',
    source: 'API',
  });
  return [
    { method: 'GET', url: '/api/payments/intents' },
    { method: 'POST', url: '/api/payments/intents', body: { invoiceId: inv } },
    { method: 'GET', url: `/api/payments/intents/${intentId}`, crossTenant: true },
    { method: 'POST', url: `/api/payments/intents/${intentId}/cancel`, crossTenant: true, adminOnly: true },
    { method: 'GET', url: '/api/payments/deposits' },
    {
      method: 'POST',
      url: '/api/payments/deposits',
      body: { depositDate: '2026-01-01', paymentIds: [cash] },
      adminOnly: true,
    },
    { method: 'GET', url: `/api/payments/deposits/${dep.json().data.id}`, crossTenant: true },
    { method: 'GET', url: '/api/payments/reconciliation' },
  ];
});
