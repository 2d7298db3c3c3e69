import { routeSecuritySuite } from '../security.js';

/** The dashboard is readable by every role: no route here is owner/admin only. */
routeSecuritySuite('dashboard', async () => [
  { method: 'GET', url: '/api/dashboard' },
  { method: 'GET', url: '/api/dashboard/revenue' },
]);
