import { createCustomer, line } from '../factories.js';
import { routeSecuritySuite } from '../security.js';

routeSecuritySuite('invoices and estimates', async (h, owner) => {
  const c = await createCustomer(h, owner);
  const body = { customerId: c.id, lineItems: [line()] };
  const inv = (await owner.call('POST', '/api/invoices', body)).json().data.id as string;
  const est = (await owner.call('POST', '/api/estimates', body)).json().data.id as string;
  return [
    { method: 'GET', url: '/api/invoices' },
    { method: 'POST', url: '/api/invoices', body },
    { method: 'GET', url: `/api/invoices/${inv}`, crossTenant: true },
    { method: 'PUT', url: `/api/invoices/${inv}`, body: { notes: 'x' }, crossTenant: true },
    { method: 'PATCH', url: `/api/invoices/${inv}`, body: { notes: 'x' }, crossTenant: true },
    { method: 'POST', url: `/api/invoices/${inv}/payments`, body: { amount: 1, method: 'cash' }, crossTenant: true },
    { method: 'POST', url: `/api/invoices/${inv}/send`, crossTenant: true },
    { method: 'POST', url: `/api/invoices/${inv}/void`, crossTenant: true },
    { method: 'POST', url: `/api/invoices/${inv}/write-off`, crossTenant: true },
    { method: 'DELETE', url: `/api/invoices/${inv}`, crossTenant: true },
    { method: 'GET', url: '/api/estimates' },
    { method: 'POST', url: '/api/estimates', body },
    { method: 'GET', url: `/api/estimates/${est}`, crossTenant: true },
    { method: 'PUT', url: `/api/estimates/${est}`, body: { notes: 'x' }, crossTenant: true },
    { method: 'PATCH', url: `/api/estimates/${est}`, body: { notes: 'x' }, crossTenant: true },
    { method: 'GET', url: `/api/estimates/${est}/pdf`, crossTenant: true },
    { method: 'POST', url: `/api/estimates/${est}/send`, crossTenant: true },
    { method: 'POST', url: `/api/estimates/${est}/approve`, crossTenant: true },
    { method: 'POST', url: `/api/estimates/${est}/decline`, crossTenant: true },
    { method: 'POST', url: `/api/estimates/${est}/convert`, crossTenant: true },
    {
      method: 'POST',
      url: `/api/estimates/${est}/convert-to-job`,
      body: { scheduledDate: '2026-11-03' },
      crossTenant: true,
    },
    { method: 'POST', url: '/api/invoices/from-jobs', body: { jobIds: ['job_missing'] } },
    { method: 'POST', url: '/api/invoices/batch', body: { from: '2026-10-01', to: '2026-10-31' } },
    { method: 'DELETE', url: `/api/estimates/${est}`, crossTenant: true },
  ];
});
