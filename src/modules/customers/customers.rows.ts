import { isNull } from 'drizzle-orm';
import { customers } from '../../db/schema/index.js';
import { ownedRows } from '../../platform/owned-rows.js';

/**
 * This organization's customers by id (platform/owned-rows.ts): every one, soft-deleted
 * included (a sent document keeps its customer, erasure reaches tombstones), and the live ones.
 * A file of its own so that the service, the consent records and the refs all use them
 * without importing each other in a loop.
 */
export const anyCustomer = ownedRows(customers, 'Customer');
export const liveCustomer = ownedRows(customers, 'Customer', isNull(customers.deletedAt));
