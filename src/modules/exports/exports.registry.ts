import type { TSchema } from 'typebox';
import type { Page } from '../../platform/pagination.js';
import type { Ctx } from '../../platform/tenancy.js';
import { BillPaymentList } from '../bill-payments/bill-payments.schemas.js';
import { listBillPayments } from '../bill-payments/bill-payments.service.js';
import { BillList } from '../bills/bills.schemas.js';
import { listBills } from '../bills/bills.service.js';
import { ContractListResponse } from '../contracts/contracts.schemas.js';
import { listContracts } from '../contracts/contracts.service.js';
import { TimeEntryList } from '../crew-tracking/time-entries.schemas.js';
import { listTimeEntries } from '../crew-tracking/time-entries.service.js';
import { CustomerList } from '../customers/customers.schemas.js';
import { listCustomers } from '../customers/customers.service.js';
import { EquipmentList } from '../equipment/equipment.schemas.js';
import { listEquipment } from '../equipment/equipment.service.js';
import { EstimateListResponse } from '../estimates/estimates.schemas.js';
import { listEstimates } from '../estimates/estimates.service.js';
import { InvoiceListResponse } from '../invoices/invoices.schemas.js';
import { listInvoices } from '../invoices/invoices.service.js';
import { JobListResponse } from '../jobs/jobs.schemas.js';
import { listJobs } from '../jobs/jobs.service.js';
import { PaymentListResponse } from '../payments/payments.schemas.js';
import { listPayments } from '../payments/payments.service.js';
import { PropertyList } from '../properties/properties.schemas.js';
import { listProperties } from '../properties/properties.service.js';
import { PoList } from '../purchase-orders/purchase-orders.schemas.js';
import { listPurchaseOrders } from '../purchase-orders/purchase-orders.service.js';
import { ServiceList } from '../services/services.schemas.js';
import { listServices } from '../services/services.service.js';
import { VendorList } from '../vendors/vendors.schemas.js';
import { listVendors } from '../vendors/vendors.service.js';
import { RouteList } from '../winter-routes/winter-routes.schemas.js';
import { listRoutes } from '../winter-routes/winter-routes.service.js';

/**
 * One page of a resource in its REST shape: the module's own list function, unfiltered,
 * walked by cursor (keyset order, so each page costs what the first does), rows as the
 * list route answers them (money as decimals, soft-deleted rows left out by the list).
 */
export type ListFn = (
  ctx: Ctx,
  page: Page,
) => Promise<{ rows: Array<{ id: string }>; hasMore: boolean; total?: number | undefined }>;

export interface ExportResource {
  /** The list route's name (`/api/<name>`), also the file name in the archive. */
  name: string;
  /** The list route's 200 response schema, `{data: [item]}`: it gives the REST shape and the CSV columns. */
  listResponse: TSchema;
  list: ListFn;
}

/**
 * EVERY EXPORTABLE RESOURCE, in archive order: one line per family. A new family
 * adds its line here and nothing else changes.
 */
export const EXPORT_RESOURCES: readonly ExportResource[] = [
  { name: 'customers', listResponse: CustomerList, list: (ctx, page) => listCustomers(ctx, {}, page) },
  { name: 'properties', listResponse: PropertyList, list: (ctx, page) => listProperties(ctx, {}, page) },
  { name: 'services', listResponse: ServiceList, list: (ctx, page) => listServices(ctx, {}, page) },
  { name: 'invoices', listResponse: InvoiceListResponse, list: (ctx, page) => listInvoices(ctx, {}, page) },
  { name: 'payments', listResponse: PaymentListResponse, list: (ctx, page) => listPayments(ctx, {}, page) },
  { name: 'estimates', listResponse: EstimateListResponse, list: (ctx, page) => listEstimates(ctx, {}, page) },
  { name: 'jobs', listResponse: JobListResponse, list: (ctx, page) => listJobs(ctx, {}, page) },
  { name: 'contracts', listResponse: ContractListResponse, list: (ctx, page) => listContracts(ctx, {}, page) },
  { name: 'vendors', listResponse: VendorList, list: (ctx, page) => listVendors(ctx, {}, page) },
  { name: 'purchase-orders', listResponse: PoList, list: (ctx, page) => listPurchaseOrders(ctx, {}, page) },
  { name: 'bills', listResponse: BillList, list: (ctx, page) => listBills(ctx, {}, page) },
  { name: 'bill-payments', listResponse: BillPaymentList, list: (ctx, page) => listBillPayments(ctx, {}, page) },
  { name: 'time-entries', listResponse: TimeEntryList, list: (ctx, page) => listTimeEntries(ctx, {}, page) },
  { name: 'equipment', listResponse: EquipmentList, list: (ctx, page) => listEquipment(ctx, {}, page) },
  { name: 'winter-routes', listResponse: RouteList, list: (ctx, page) => listRoutes(ctx, {}, page) },
];

/** Every name a request may ask for (those that exist on this build). */
export const EXPORT_RESOURCE_NAMES: readonly string[] = EXPORT_RESOURCES.map((r) => r.name);

const BY_NAME = new Map(EXPORT_RESOURCES.map((r) => [r.name, r]));

export function exportResource(name: string): ExportResource | undefined {
  return BY_NAME.get(name);
}
