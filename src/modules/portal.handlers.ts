import { contractPortalHandler } from './contracts/contracts.portal.js';
import { estimatePortal } from './estimates/estimates.portal.js';
import { invoicePortal } from './invoices/invoices.portal.js';
import type { PortalHandlers } from './portal-links/portal-links.handlers.js';

/**
 * One entry per document type that can be opened from a customer link. It names document
 * modules, so it lives at the top beside index.ts, which hands it to the portal's routes.
 */
export const portalHandlers: PortalHandlers = {
  invoice: invoicePortal,
  estimate: estimatePortal,
  contract: contractPortalHandler,
};
