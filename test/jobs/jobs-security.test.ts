import { createCustomer } from '../factories.js';
import { routeSecuritySuite } from '../security.js';

routeSecuritySuite('jobs', async (h, owner) => {
  const customer = await createCustomer(h, owner);
  const created = await owner.call('POST', '/api/jobs', {
    customerId: customer.id,
    scheduledDate: '2026-05-04',
    checklist: ['Mow'],
  });
  const job = created.json().data;
  const draft = (
    await owner.call('POST', '/api/jobs', { customerId: customer.id, scheduledDate: '2026-05-05', draft: true })
  ).json().data;
  return [
    { method: 'GET', url: '/api/jobs' },
    { method: 'GET', url: '/api/jobs/calendar?startDate=2026-05-01&endDate=2026-05-31' },
    { method: 'POST', url: '/api/jobs', body: { customerId: customer.id, scheduledDate: '2026-05-04' } },
    { method: 'GET', url: `/api/jobs/${job.id}`, crossTenant: true },
    { method: 'PUT', url: `/api/jobs/${job.id}`, body: { notes: 'x' }, crossTenant: true },
    { method: 'PATCH', url: `/api/jobs/${job.id}`, body: { notes: 'x' }, crossTenant: true },
    { method: 'DELETE', url: `/api/jobs/${job.id}`, crossTenant: true },
    { method: 'POST', url: `/api/jobs/${draft.id}/publish`, crossTenant: true },
    {
      method: 'PATCH',
      url: `/api/jobs/${job.id}/checklist/${job.checklist[0].id}`,
      body: { completed: true },
      crossTenant: true,
    },
  ];
});
