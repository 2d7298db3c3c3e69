import type { Db } from '../../db/client.js';
import { hashSecret, organizationOfSecret } from '../../platform/auth/secret-lookups.js';
import { asPlatform } from '../../platform/cross-tenant.js';
import { notFound } from '../../platform/errors.js';
import type { Ctx } from '../../platform/tenancy.js';
import { bookableServices } from '../services/services.refs.js';
import { getOrgSettings } from '../settings/settings.service.js';

/*
 * The booking slug arrives without an organization (operations.md §13): the global lookup names
 * the organization first, then the organization's own settings must still hold this slug (a
 * mapping left behind by a change finds nothing). An unknown slug and a switched-off one are the
 * same 404, with the same words.
 */

export const SLUG = /^[a-z0-9-]{3,40}$/;

/** Per address and organization (its slug): 5 a minute. Counted before any database read. */
export const PER_ADDRESS = { name: 'public-request-address', points: 5, durationSec: 60 };
/** Per organization: 200 a day (counted only for requests that passed the spam check). */
export const PER_ORGANIZATION = { name: 'public-request-organization', points: 200, durationSec: 86_400 };

export const noSuchForm = () => notFound('Booking form');

/** The organization whose booking slug this is, or undefined (unknown, malformed or switched off). */
export async function organizationOfSlug(db: Db, slug: string): Promise<string | undefined> {
  if (!SLUG.test(slug)) return undefined;
  return asPlatform(db, (tx) => organizationOfSecret(tx, 'booking_slug', hashSecret(slug)));
}

/** Inside the slug's organization: 404 unless its settings still name this slug. */
export async function requireSlug(ctx: Ctx, slug: string): Promise<{ name: string; timezone: string }> {
  const settings = await getOrgSettings(ctx);
  if (settings.bookingSlug !== slug) throw noSuchForm();
  return { name: settings.companyName ?? settings.name, timezone: settings.timezone };
}

/** All the form shows: the public name and the bookable services, nothing else of the organization. */
export async function bookingForm(ctx: Ctx, slug: string) {
  const { name } = await requireSlug(ctx, slug);
  return { name, services: await bookableServices(ctx) };
}
