import { quickbooksSyncJobs } from '../../src/db/schema/index.js';
import { newId } from '../../src/platform/ids.js';
import { routeSecuritySuite } from '../security.js';

/** The QuickBooks routes under the shared suite: 401 without credentials, members refused, foreign records 404. */
routeSecuritySuite('quickbooks', async (h, owner) => {
  const id = newId('qbj');
  await h.admin.db.insert(quickbooksSyncJobs).values({
    id,
    organizationId: owner.organizationId,
    entity: 'customer',
    entityId: 'cus_x',
    version: 'evt_x',
    eventType: 'customer.created',
    payload: {},
    status: 'failed',
    error: 'Duplicate Name Exists Error',
  });
  return [
    { method: 'GET', url: '/api/integrations/quickbooks', adminOnly: true },
    { method: 'POST', url: '/api/integrations/quickbooks/connect', adminOnly: true },
    { method: 'GET', url: '/api/integrations/quickbooks/callback?state=x', adminOnly: true },
    { method: 'POST', url: '/api/integrations/quickbooks/disconnect', adminOnly: true },
    { method: 'GET', url: '/api/integrations/quickbooks/records?status=failed', adminOnly: true },
    { method: 'POST', url: `/api/integrations/quickbooks/records/${id}/retry`, adminOnly: true, crossTenant: true },
  ];
});
