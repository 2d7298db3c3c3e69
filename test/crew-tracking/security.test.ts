import { routeSecuritySuite } from '../security.js';
import { memberIdOf } from './helpers.js';

routeSecuritySuite('crew tracking', async (_h, owner) => {
  const crew = (await owner.call('POST', '/api/crew-tracking/crews', { name: 'Crew A' })).json().data;
  const entry = (
    await owner.call('POST', '/api/crew-tracking/clock-in', { at: new Date(Date.now() - 60_000).toISOString() })
  ).json().data;
  await owner.call('POST', '/api/crew-tracking/clock-out', {});
  const device = (await owner.call('POST', '/api/crew-tracking/devices', { name: 'Phone' })).json().data;
  const memberId = await memberIdOf(owner);
  const now = new Date().toISOString();
  return [
    { method: 'GET', url: '/api/crew-tracking/crews' },
    { method: 'POST', url: '/api/crew-tracking/crews', body: { name: 'B' }, adminOnly: true },
    { method: 'GET', url: `/api/crew-tracking/crews/${crew.id}`, crossTenant: true },
    {
      method: 'PATCH',
      url: `/api/crew-tracking/crews/${crew.id}`,
      body: { name: 'C' },
      crossTenant: true,
      adminOnly: true,
    },
    { method: 'DELETE', url: `/api/crew-tracking/crews/${crew.id}`, crossTenant: true, adminOnly: true },
    { method: 'POST', url: '/api/crew-tracking/clock-in', body: { memberId }, adminOnly: true },
    { method: 'POST', url: '/api/crew-tracking/clock-out', body: { memberId }, adminOnly: true },
    { method: 'GET', url: '/api/crew-tracking/time-entries' },
    { method: 'GET', url: `/api/crew-tracking/time-entries/${entry.id}`, crossTenant: true },
    {
      method: 'PATCH',
      url: `/api/crew-tracking/time-entries/${entry.id}`,
      body: { type: 'drive' },
      crossTenant: true,
      adminOnly: true,
    },
    { method: 'DELETE', url: `/api/crew-tracking/time-entries/${entry.id}`, crossTenant: true, adminOnly: true },
    { method: 'GET', url: '/api/crew-tracking/timesheets?from=2026-03-01&to=2026-03-07' },
    { method: 'POST', url: '/api/crew-tracking/locations', body: { points: [{ lat: 1, lng: 1, recordedAt: now }] } },
    { method: 'GET', url: '/api/crew-tracking/locations/latest' },
    { method: 'GET', url: `/api/crew-tracking/locations?memberId=${memberId}&from=2026-03-01&to=2026-03-02` },
    { method: 'POST', url: '/api/crew-tracking/devices', body: { name: 'P', memberId }, adminOnly: true },
    { method: 'GET', url: '/api/crew-tracking/devices' },
    { method: 'DELETE', url: `/api/crew-tracking/devices/${device.id}`, crossTenant: true },
  ];
});
