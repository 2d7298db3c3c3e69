import { requests } from '../../src/db/schema/index.js';
import { newId } from '../../src/platform/ids.js';
import { routeSecuritySuite } from '../security.js';

routeSecuritySuite('requests', async (h, owner) => {
  const id = newId('req');
  await h.admin.db.insert(requests).values({
    organizationId: owner.organizationId,
    id,
    firstName: 'Robin',
    email: 'robin@example.com',
    street: '12 Elm Street',
    city: 'Springfield',
    description: 'Mow, please',
  });
  return [
    { method: 'GET', url: '/api/requests' },
    { method: 'GET', url: `/api/requests/${id}`, crossTenant: true },
    { method: 'POST', url: `/api/requests/${id}/convert`, body: { to: 'estimate' }, crossTenant: true },
    { method: 'POST', url: `/api/requests/${id}/decline`, crossTenant: true },
    { method: 'POST', url: `/api/requests/${id}/archive`, crossTenant: true },
  ];
});
