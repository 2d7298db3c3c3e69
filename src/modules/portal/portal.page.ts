import type { Db } from '../../db/client.js';
import { today } from '../../platform/dates.js';
import { inTenant } from '../../platform/tenancy.js';
import { customerById, customerName } from '../customers/customers.refs.js';
import { upcomingVisitsOf } from '../jobs/jobs.portal.js';
import { type StripeDeps, stripeKeyOrNull } from '../payments/stripe/stripe-client.js';
import type { PortalHandlers, PortalRequestMeta } from '../portal-links/portal-links.handlers.js';
import { lookupPortalLink, type PortalDocumentType } from '../portal-links/portal-links.service.js';
import { serviceAddressOf } from '../properties/properties.refs.js';
import { getOrgSettings } from '../settings/settings.service.js';

/** Who the customer deals with, as the page shows it (from the organization's settings). */
export interface PortalCompany {
  name: string;
  email: string | null;
  phone: string | null;
  address: string | null;
  timezone: string;
  currency: string;
}

/** A visit still to come, as the customer page lists it (GET /api/portal/{token}/visits's items). */
export type PortalVisit = Awaited<ReturnType<typeof upcomingVisitsOf>>[number];

/** Link types whose page lists the customer's upcoming visits (the types GET /api/portal/{token}/visits answers). */
const SHOWS_VISITS: ReadonlySet<string> = new Set(['contract', 'invoice']);

/** Everything the customer page renders; built once per request, rendered by portal.html.ts. */
export type PortalPageModel =
  | {
      kind: 'document';
      token: string;
      type: PortalDocumentType;
      document: Record<string, unknown>;
      company: PortalCompany;
      customerName: string | null;
      /** Where the work is done: the document's property on one line, when it names one. */
      serviceAddress: string | null;
      /** Today in the organization's timezone (due and expiry wording). */
      today: string;
      /** Stripe.js's publishable key when card payment can be offered (both keys and the webhook secret set); null otherwise. */
      stripePublishableKey: string | null;
      /** The PDF exists for this type (invoices and estimates). */
      hasPdf: boolean;
      /** The customer's visits still to come, soonest first (contract and invoice links; empty otherwise). */
      visits: PortalVisit[];
    }
  | { kind: 'expired'; company: PortalCompany }
  | { kind: 'missing' };

/**
 * The customer page's data for a link: the document as the JSON portal shows it (the
 * same handler, so the view is recorded the same way), the company's details and
 * whether card payment is set up. An unknown token is `missing`, an expired one
 * `expired` (with the company, so the page says whom to ask for a new link).
 */
export async function loadPortalPage(
  db: Db,
  token: string,
  meta: PortalRequestMeta,
  stripe: StripeDeps,
  portalHandlers: PortalHandlers,
): Promise<PortalPageModel> {
  const link = await lookupPortalLink(db, token);
  const handler = link ? portalHandlers[link.documentType] : undefined;
  if (!link || !handler) return { kind: 'missing' };
  const actor = { kind: 'portal' as const, id: link.tokenId, role: 'member' as const };
  return inTenant(db, link.organizationId, actor, async (ctx) => {
    const settings = await getOrgSettings(ctx);
    const company: PortalCompany = {
      name: settings.companyName ?? settings.name,
      email: settings.companyEmail,
      phone: settings.companyPhone,
      address: settings.companyAddress,
      timezone: settings.timezone,
      currency: settings.currency,
    };
    if (link.expired) return { kind: 'expired', company };
    const document = await handler.view(ctx, link.documentId, meta);
    const customer =
      typeof document.customerId === 'string' ? await customerById(ctx, document.customerId).catch(() => null) : null;
    // Card payment needs all three: Stripe.js's key, the key that makes the intent, and the
    // webhook secret through which the payment reaches the invoice (else the page would wait forever).
    const visits = SHOWS_VISITS.has(link.documentType)
      ? await upcomingVisitsOf(ctx, link.documentType, link.documentId)
      : [];
    const cardReady =
      link.documentType === 'invoice' &&
      settings.stripePublishableKey !== null &&
      settings.stripeWebhookSecretSealed !== null &&
      stripeKeyOrNull(settings, stripe.box) !== null;
    return {
      kind: 'document',
      token,
      type: link.documentType,
      document,
      company,
      customerName: customer ? customerName(customer) : null,
      serviceAddress:
        (await serviceAddressOf(ctx, typeof document.propertyId === 'string' ? document.propertyId : null))?.join(
          ', ',
        ) ?? null,
      today: today(settings.timezone),
      stripePublishableKey: cardReady ? settings.stripePublishableKey : null,
      hasPdf: handler.pdf !== undefined,
      visits,
    };
  });
}
