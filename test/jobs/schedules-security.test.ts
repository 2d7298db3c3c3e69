import { createCustomer } from '../factories.js';
import { routeSecuritySuite } from '../security.js';

routeSecuritySuite('job schedules and day routes', async (h, owner) => {
  const customer = await createCustomer(h, owner);
  const body = {
    customerId: customer.id,
    title: 'Weekly mowing',
    rrule: 'FREQ=WEEKLY;BYDAY=TU',
    startDate: '2026-04-01',
    billing: { mode: 'none' },
  };
  const schedule = (await owner.call('POST', '/api/jobs/schedules', body)).json().data;
  const paused = (await owner.call('POST', '/api/jobs/schedules', body)).json().data;
  await owner.call('POST', `/api/jobs/schedules/${paused.id}/pause`);
  const crew = (await owner.call('POST', '/api/crew-tracking/crews', { name: 'North' })).json().data;
  return [
    { method: 'GET', url: `/api/jobs/route?date=2026-05-05&crewId=${crew.id}` },
    { method: 'POST', url: `/api/jobs/route/apply?date=2026-05-05&crewId=${crew.id}` },
    { method: 'GET', url: '/api/jobs/schedules' },
    { method: 'POST', url: '/api/jobs/schedules', body },
    { method: 'GET', url: `/api/jobs/schedules/${schedule.id}`, crossTenant: true },
    { method: 'PATCH', url: `/api/jobs/schedules/${schedule.id}`, body: { notes: 'x' }, crossTenant: true },
    {
      method: 'POST',
      url: `/api/jobs/schedules/${schedule.id}/skip`,
      body: { date: schedule.nextOccurrences[0] },
      crossTenant: true,
    },
    { method: 'POST', url: `/api/jobs/schedules/${paused.id}/resume`, crossTenant: true },
    { method: 'POST', url: `/api/jobs/schedules/${schedule.id}/pause`, crossTenant: true },
    { method: 'POST', url: `/api/jobs/schedules/${schedule.id}/end`, crossTenant: true },
  ];
});
