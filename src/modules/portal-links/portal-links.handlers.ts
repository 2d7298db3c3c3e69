import type { PdfSource } from '../../platform/pdf.js';
import type { Ctx } from '../../platform/tenancy.js';
import type { PortalDocumentType } from './portal-links.service.js';

/** Facts about the customer's request, kept as evidence (e.g. contract signatures). */
export interface PortalRequestMeta {
  ip: string;
  userAgent: string;
}

/**
 * What a document type offers in the customer portal. Each billing/contract
 * module registers one in src/modules/portal.handlers.ts; portal.routes.ts dispatches to it.
 * Handlers run inside the token's organization with `ctx.actor.kind === 'portal'`
 * (the customer), so activity entries can tell customer actions from staff ones.
 */
export interface PortalHandler {
  /** The document as the customer sees it; also records the view (first view of a sent estimate → viewed). */
  view(ctx: Ctx, documentId: string, meta: PortalRequestMeta): Promise<Record<string, unknown>>;
  /** The document as a PDF, for types that have one (invoices, estimates). */
  pdf?(ctx: Ctx, documentId: string): Promise<PdfSource>;
  /** Customer actions by name (`approve`, `decline`, `sign`); each returns the updated document. */
  actions: Record<
    string,
    (
      ctx: Ctx,
      documentId: string,
      body: Record<string, unknown>,
      meta: PortalRequestMeta,
    ) => Promise<Record<string, unknown>>
  >;
}

export type PortalHandlers = Partial<Record<PortalDocumentType, PortalHandler>>;
