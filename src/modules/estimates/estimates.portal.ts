import type { PortalHandler } from '../portal-links/portal-links.handlers.js';
import { estimatePdf, respondInPortal, viewEstimateInPortal } from './estimates.service.js';

/** The customer opens, approves or declines an estimate from the emailed link. */
export const estimatePortal: PortalHandler = {
  view: (ctx, id) => viewEstimateInPortal(ctx, id),
  pdf: (ctx, id) => estimatePdf(ctx, id),
  actions: {
    approve: (ctx, id) => respondInPortal(ctx, id, 'approve'),
    decline: (ctx, id) => respondInPortal(ctx, id, 'decline'),
  },
};
