import { routeSecuritySuite } from '../security.js';

routeSecuritySuite('equipment', async (_h, owner) => {
  const item = (await owner.call('POST', '/api/equipment', { name: 'Mower', category: 'mower' })).json().data;
  const plan = (
    await owner.call('POST', `/api/equipment/${item.id}/maintenance-plans`, { name: 'Oil', everyHours: 50 })
  ).json().data;
  const base = `/api/equipment/${item.id}`;
  return [
    { method: 'GET', url: '/api/equipment' },
    { method: 'GET', url: '/api/equipment/maintenance-due' },
    { method: 'POST', url: '/api/equipment', body: { name: 'X', category: 'plow' }, adminOnly: true },
    { method: 'GET', url: base, crossTenant: true },
    { method: 'PATCH', url: base, body: { notes: 'x' }, crossTenant: true, adminOnly: true },
    { method: 'DELETE', url: base, crossTenant: true, adminOnly: true },
    { method: 'POST', url: `${base}/check-out`, body: {}, crossTenant: true },
    { method: 'POST', url: `${base}/check-in`, body: {}, crossTenant: true },
    { method: 'GET', url: `${base}/assignments`, crossTenant: true },
    {
      method: 'POST',
      url: `${base}/maintenance-plans`,
      body: { name: 'Blades', everyDays: 30 },
      crossTenant: true,
      adminOnly: true,
    },
    { method: 'GET', url: `${base}/maintenance-plans`, crossTenant: true },
    {
      method: 'POST',
      url: `${base}/maintenance`,
      body: { performedAt: new Date().toISOString(), notes: 'x', planId: plan.id },
      crossTenant: true,
    },
    { method: 'GET', url: `${base}/maintenance`, crossTenant: true },
  ];
});
