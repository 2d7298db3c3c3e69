import { eq } from 'drizzle-orm';
import { contracts } from '../../src/db/schema/index.js';
import { createCustomer } from '../factories.js';
import { routeSecuritySuite } from '../security.js';

routeSecuritySuite('contracts and contract templates', async (h, owner) => {
  const customer = await createCustomer(h, owner);
  const template = (
    await owner.call('POST', '/api/contract-templates', { name: 'T', body: 'Hi {{customer.name}}' })
  ).json().data;
  const make = async () =>
    (
      await owner.call('POST', '/api/contracts', { title: 'C', customerId: customer.id, templateId: template.id })
    ).json().data;
  const draft = await make();
  const toSend = await make();
  const toCancel = await make();
  const signed = await make();
  await h.admin.db.update(contracts).set({ status: 'signed' }).where(eq(contracts.id, signed.id));
  return [
    { method: 'GET', url: '/api/contract-templates' },
    { method: 'POST', url: '/api/contract-templates', body: { name: 'N', body: 'B' } },
    { method: 'GET', url: `/api/contract-templates/${template.id}`, crossTenant: true },
    { method: 'PUT', url: `/api/contract-templates/${template.id}`, body: { name: 'X' }, crossTenant: true },
    { method: 'PATCH', url: `/api/contract-templates/${template.id}`, body: { name: 'X' }, crossTenant: true },
    { method: 'DELETE', url: `/api/contract-templates/${template.id}`, crossTenant: true },
    { method: 'GET', url: '/api/contracts' },
    { method: 'POST', url: '/api/contracts', body: { title: 'C', customerId: customer.id } },
    { method: 'GET', url: `/api/contracts/${draft.id}`, crossTenant: true },
    { method: 'PUT', url: `/api/contracts/${draft.id}`, body: { title: 'X' }, crossTenant: true },
    { method: 'PATCH', url: `/api/contracts/${draft.id}`, body: { title: 'X' }, crossTenant: true },
    { method: 'POST', url: `/api/contracts/${toSend.id}/send`, crossTenant: true },
    { method: 'POST', url: `/api/contracts/${toCancel.id}/cancel`, crossTenant: true },
    { method: 'POST', url: `/api/contracts/${signed.id}/amendments`, body: { title: 'A' }, crossTenant: true },
    { method: 'GET', url: '/api/contract-analytics' },
    { method: 'GET', url: `/api/contract-activity/${draft.id}`, crossTenant: true },
  ];
});
