import { routeSecuritySuite } from '../security.js';

routeSecuritySuite('customers, properties, services, settings', async (_h, owner) => {
  const customer = (await owner.call('POST', '/api/customers', { firstName: 'Sec' })).json().data.id;
  const spare = (await owner.call('POST', '/api/customers', { firstName: 'Spare' })).json().data.id;
  const property = (await owner.call('POST', '/api/properties', { customerId: customer, street: '1 A St' })).json().data
    .id;
  const service = (await owner.call('POST', '/api/services', { name: 'Mow', unitPrice: 30 })).json().data.id;
  return [
    { method: 'GET', url: '/api/customers' },
    { method: 'POST', url: '/api/customers', body: { firstName: 'X' } },
    { method: 'GET', url: `/api/customers/${customer}`, crossTenant: true },
    { method: 'PATCH', url: `/api/customers/${customer}`, body: { notes: 'x' }, crossTenant: true },
    { method: 'POST', url: `/api/customers/${customer}/deactivate`, crossTenant: true },
    { method: 'POST', url: `/api/customers/${customer}/reactivate`, crossTenant: true },
    { method: 'POST', url: `/api/customers/${customer}/anonymize`, crossTenant: true, adminOnly: true },
    { method: 'DELETE', url: `/api/customers/${customer}/hard-delete`, crossTenant: true, adminOnly: true },
    { method: 'DELETE', url: `/api/customers/${spare}`, crossTenant: true },
    { method: 'GET', url: '/api/properties' },
    { method: 'POST', url: '/api/properties', body: { customerId: customer, street: '2 B St' } },
    { method: 'GET', url: `/api/properties/${property}`, crossTenant: true },
    { method: 'PATCH', url: `/api/properties/${property}`, body: { name: 'x' }, crossTenant: true },
    { method: 'DELETE', url: `/api/properties/${property}`, crossTenant: true },
    { method: 'GET', url: '/api/services' },
    { method: 'POST', url: '/api/services', body: { name: 'X', unitPrice: 1 } },
    { method: 'GET', url: `/api/services/${service}`, crossTenant: true },
    { method: 'PATCH', url: `/api/services/${service}`, body: { unitPrice: 2 }, crossTenant: true },
    { method: 'POST', url: `/api/services/${service}/reprice`, body: { unitPrice: 3 }, crossTenant: true },
    { method: 'DELETE', url: `/api/services/${service}`, crossTenant: true },
    { method: 'GET', url: '/api/settings' },
    { method: 'PATCH', url: '/api/settings', body: { taxRate: 1 }, adminOnly: true },
  ];
});
