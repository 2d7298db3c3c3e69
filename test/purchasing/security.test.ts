import { routeSecuritySuite } from '../security.js';

routeSecuritySuite('vendors, purchase orders, bills, bill payments, ledger', async (_h, owner) => {
  const vendor = (await owner.call('POST', '/api/vendors', { name: 'Vendor' })).json().data.id as string;
  const lineItems = [{ description: 'Mulch', quantity: 1, unitCost: 10 }];
  const po = (await owner.call('POST', '/api/purchase-orders', { vendorId: vendor, lineItems })).json().data
    .id as string;
  const bill = (
    await owner.call('POST', '/api/bills', { vendorId: vendor, lineItems: [{ description: 'x', amount: 10 }] })
  ).json().data.id as string;
  const payment = (
    await owner.call('POST', '/api/bill-payments', {
      vendorId: vendor,
      method: 'check',
      allocations: [{ billId: bill, amount: 1 }],
    })
  ).json().data.id as string;
  const billBody = { vendorId: vendor, lineItems: [{ description: 'x', amount: 1 }] };
  return [
    { method: 'GET', url: '/api/vendors' },
    { method: 'POST', url: '/api/vendors', body: { name: 'V' } },
    { method: 'GET', url: `/api/vendors/${vendor}`, crossTenant: true },
    { method: 'PATCH', url: `/api/vendors/${vendor}`, body: { notes: 'x' }, crossTenant: true },
    { method: 'DELETE', url: `/api/vendors/${vendor}`, crossTenant: true },
    { method: 'GET', url: '/api/purchase-orders' },
    { method: 'POST', url: '/api/purchase-orders', body: { vendorId: vendor, lineItems } },
    { method: 'GET', url: `/api/purchase-orders/${po}`, crossTenant: true },
    { method: 'PATCH', url: `/api/purchase-orders/${po}`, body: { notes: 'x' }, crossTenant: true },
    { method: 'DELETE', url: `/api/purchase-orders/${po}`, crossTenant: true },
    { method: 'POST', url: `/api/purchase-orders/${po}/send`, crossTenant: true },
    { method: 'POST', url: `/api/purchase-orders/${po}/receive`, crossTenant: true },
    { method: 'POST', url: `/api/purchase-orders/${po}/cancel`, crossTenant: true },
    { method: 'POST', url: `/api/purchase-orders/${po}/bill`, crossTenant: true, adminOnly: true },
    { method: 'GET', url: '/api/bills', adminOnly: true },
    { method: 'POST', url: '/api/bills', body: billBody, adminOnly: true },
    { method: 'GET', url: `/api/bills/${bill}`, crossTenant: true, adminOnly: true },
    { method: 'PATCH', url: `/api/bills/${bill}`, body: { notes: 'x' }, crossTenant: true, adminOnly: true },
    { method: 'DELETE', url: `/api/bills/${bill}`, crossTenant: true, adminOnly: true },
    { method: 'POST', url: `/api/bills/${bill}/post`, crossTenant: true, adminOnly: true },
    { method: 'POST', url: `/api/bills/${bill}/approve`, crossTenant: true, adminOnly: true },
    { method: 'POST', url: `/api/bills/${bill}/void`, crossTenant: true, adminOnly: true },
    { method: 'GET', url: '/api/bill-payments', adminOnly: true },
    {
      method: 'POST',
      url: '/api/bill-payments',
      body: { vendorId: vendor, method: 'ach', allocations: [{ billId: bill, amount: 1 }] },
      adminOnly: true,
    },
    { method: 'GET', url: `/api/bill-payments/${payment}`, crossTenant: true, adminOnly: true },
    { method: 'POST', url: `/api/bill-payments/${payment}/settle`, crossTenant: true, adminOnly: true },
    {
      method: 'POST',
      url: `/api/bill-payments/${payment}/fail`,
      body: { reason: 'x' },
      crossTenant: true,
      adminOnly: true,
    },
    { method: 'GET', url: '/api/ledger/accounts', adminOnly: true },
    { method: 'GET', url: '/api/ledger/entries', adminOnly: true },
    { method: 'GET', url: '/api/ledger/trial-balance', adminOnly: true },
    { method: 'GET', url: '/api/ledger/close', adminOnly: true },
    { method: 'POST', url: '/api/ledger/close', body: { through: '2020-01-31' }, adminOnly: true },
    { method: 'POST', url: '/api/ledger/reopen', body: { through: null }, adminOnly: true },
    { method: 'PATCH', url: '/api/ledger/accounts/1000', body: { externalName: 'Checking' }, adminOnly: true },
    { method: 'GET', url: '/api/ledger/journal?from=2020-01-01&to=2020-01-31', adminOnly: true },
  ];
});
