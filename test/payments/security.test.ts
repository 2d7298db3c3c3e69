import { createCustomer } from '../factories.js';
import { routeSecuritySuite } from '../security.js';
import { pay, sentInvoice } from './helpers.js';

// POST /api/payments/stripe/{organizationId} is public by design (Stripe signs it): see stripe.test.ts.
routeSecuritySuite('payments', async (h, owner) => {
  const c = await createCustomer(h, owner);
  const inv = await sentInvoice(owner, c.id, 100);
  const p = await pay(owner, inv, 100);
  return [
    { method: 'GET', url: '/api/payments' },
    { method: 'GET', url: `/api/payments/${p}`, crossTenant: true },
    { method: 'POST', url: `/api/payments/${p}/refunds`, body: { amount: 1 }, crossTenant: true, adminOnly: true },
    { method: 'GET', url: `/api/invoices/${inv}/pdf`, crossTenant: true },
  ];
});
