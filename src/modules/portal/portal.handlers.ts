import { contractPortalHandler } from '../contracts/contracts.portal.js';
import { estimatePortal } from '../estimates/estimates.portal.js';
import { invoicePortal } from '../invoices/invoices.portal.js';
import type { PortalHandlers } from './portal.registry.js';

/** One entry per document type that can be opened from a customer link. */
export const portalHandlers: PortalHandlers = {
  invoice: invoicePortal,
  estimate: estimatePortal,
  contract: contractPortalHandler,
};
