import { routeSecuritySuite } from '../security.js';

/** Every export route is owner/admin only; an export id of another organization is a 404. */
routeSecuritySuite('exports', async (_h, owner) => {
  const created = (await owner.call('POST', '/api/exports', { format: 'ndjson', resources: ['customers'] })).json()
    .data;
  return [
    { method: 'POST', url: '/api/exports', body: { format: 'csv' }, adminOnly: true },
    { method: 'GET', url: '/api/exports', adminOnly: true },
    { method: 'GET', url: `/api/exports/${created.id}`, crossTenant: true, adminOnly: true },
    { method: 'GET', url: `/api/exports/${created.id}/download`, crossTenant: true, adminOnly: true },
  ];
});
