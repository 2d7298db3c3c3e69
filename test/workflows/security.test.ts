import { routeSecuritySuite } from '../security.js';
import { defineWorkflow } from './helpers.js';

routeSecuritySuite('workflows', async (_h, owner) => {
  const wf = await defineWorkflow(owner, {
    name: 'secured',
    trigger: { event: 'customer.created' },
    actions: [{ type: 'add_customer_tag', tag: 'new' }],
  });
  const body = { name: 'another', trigger: { event: 'customer.created' }, actions: [{ type: 'emit' }] };
  return [
    { method: 'GET', url: '/api/workflows', adminOnly: true },
    { method: 'POST', url: '/api/workflows', body, adminOnly: true },
    { method: 'GET', url: `/api/workflows/${wf.id}`, crossTenant: true, adminOnly: true },
    { method: 'PATCH', url: `/api/workflows/${wf.id}`, body: { active: false }, crossTenant: true, adminOnly: true },
    { method: 'GET', url: `/api/workflows/${wf.id}/runs`, crossTenant: true, adminOnly: true },
    { method: 'DELETE', url: `/api/workflows/${wf.id}`, crossTenant: true, adminOnly: true },
  ];
});
