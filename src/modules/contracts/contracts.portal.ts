import type { PortalHandler } from '../portal-links/portal-links.handlers.js';
import { signContractInPortal, viewContractInPortal } from './contracts.service.js';

/** The customer's side of a contract link: read it (recorded as `viewed`) and sign it. */
export const contractPortalHandler: PortalHandler = {
  view: (ctx, id) => viewContractInPortal(ctx, id),
  actions: {
    sign: (ctx, id, body, meta) => signContractInPortal(ctx, id, body, meta),
  },
};
