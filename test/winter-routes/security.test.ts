import { routeSecuritySuite } from '../security.js';
import { customer, property, route, stop, storm } from './helpers.js';

routeSecuritySuite('winter routes', async (_h, owner) => {
  const cus = await customer(owner);
  const prp = await property(owner, cus, { lat: 44.47, lng: -73.21 });
  const prp2 = await property(owner, cus, { lat: 44.48, lng: -73.2 }, '2 Elm St');
  const r = await route(owner, { stops: [stop(prp)] });
  const s = await storm(owner);
  const dispatched = await owner.call('POST', `/api/winter-routes/storms/${s.id}/dispatch`, {});
  const run = dispatched.json().data.runs[0];
  const visit = run.visits[0];
  const other = await storm(owner, { name: 'Other storm' });
  return [
    { method: 'GET', url: '/api/winter-routes' },
    { method: 'POST', url: '/api/winter-routes', body: { name: 'X' }, adminOnly: true },
    { method: 'GET', url: `/api/winter-routes/${r.id}`, crossTenant: true },
    { method: 'PATCH', url: `/api/winter-routes/${r.id}`, body: { name: 'Y' }, crossTenant: true, adminOnly: true },
    {
      method: 'PUT',
      url: `/api/winter-routes/${r.id}/stops`,
      body: { stops: [stop(prp), stop(prp2)] },
      crossTenant: true,
      adminOnly: true,
    },
    { method: 'POST', url: `/api/winter-routes/${r.id}/optimize`, crossTenant: true, adminOnly: true },
    { method: 'DELETE', url: `/api/winter-routes/${r.id}`, crossTenant: true, adminOnly: true },
    { method: 'GET', url: '/api/winter-routes/storms' },
    {
      method: 'POST',
      url: '/api/winter-routes/storms',
      body: { name: 'S', startedAt: '2026-01-01T00:00:00Z', snowfallInches: 1 },
      adminOnly: true,
    },
    { method: 'GET', url: `/api/winter-routes/storms/${s.id}`, crossTenant: true },
    {
      method: 'PATCH',
      url: `/api/winter-routes/storms/${s.id}`,
      body: { ice: true },
      crossTenant: true,
      adminOnly: true,
    },
    {
      method: 'POST',
      url: `/api/winter-routes/storms/${other.id}/dispatch`,
      body: {},
      crossTenant: true,
      adminOnly: true,
    },
    { method: 'POST', url: `/api/winter-routes/storms/${s.id}/invoice`, crossTenant: true, adminOnly: true },
    { method: 'GET', url: `/api/winter-routes/storms/${s.id}/report`, crossTenant: true },
    { method: 'GET', url: '/api/winter-routes/runs' },
    { method: 'GET', url: `/api/winter-routes/runs/${run.id}`, crossTenant: true },
    {
      method: 'POST',
      url: `/api/winter-routes/runs/${run.id}/visits/${visit.id}`,
      body: { status: 'serviced', pushes: 2 },
      crossTenant: true,
    },
  ];
});
