import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { today } from '../../platform/dates.js';
import { inTenant } from '../../platform/tenancy.js';
import { type BookingAssets, type RenderedPage, renderBookingPage, renderNotFoundPage } from './requests.page.js';
import { bookingForm, organizationOfSlug, requireSlug } from './requests.public.js';

/*
 * The booking page at /book/{slug} and its files. Nothing comes from another host: the ALTCHA
 * widget and its SHA-256 worker are served from the `altcha` package's dist (the build without
 * inline styles or workers, so the page's CSP stays 'self'). Hidden from /openapi.json: a web page.
 */

const here = dirname(fileURLToPath(import.meta.url));
// The package's "require" entry is dist/main/…; the CSP-friendly files sit beside it.
const altchaDist = join(dirname(createRequire(import.meta.url).resolve('altcha')), '..');

const FILES: Record<string, { path: string; type: string }> = {
  'booking.css': { path: join(here, 'public', 'booking.css'), type: 'text/css; charset=utf-8' },
  'booking.js': { path: join(here, 'public', 'booking.js'), type: 'text/javascript; charset=utf-8' },
  'altcha.js': { path: join(altchaDist, 'external', 'altcha.min.js'), type: 'text/javascript; charset=utf-8' },
  'altcha.css': { path: join(altchaDist, 'external', 'altcha.css'), type: 'text/css; charset=utf-8' },
  'altcha-sha.js': { path: join(altchaDist, 'workers', 'sha.js'), type: 'text/javascript; charset=utf-8' },
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** The page's policy: everything from this origin; the worker too. Framing allowed: a business may embed its form. */
export const BOOKING_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

export function sendPage(reply: FastifyReply, page: RenderedPage) {
  return reply
    .code(page.status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', BOOKING_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .send(page.html);
}

export function registerBookingPage(app: FastifyInstance): void {
  const assets = new Map<string, Asset>();
  for (const [name, file] of Object.entries(FILES)) {
    const body = readFileSync(file.path);
    assets.set(name, {
      body,
      type: file.type,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
    });
  }
  const version = (name: string) => (assets.get(name) as Asset).etag.slice(1, 9);
  const versions: BookingAssets = { css: version('booking.css'), js: version('booking.js') + version('altcha.js') };
  const options = { schema: { hide: true }, config: { access: 'public' as const } };
  const { database } = app.deps;

  app.get<{ Params: { slug: string } }>('/book/:slug', options, async (request, reply) => {
    const { slug } = request.params;
    const organizationId = await organizationOfSlug(database.db, slug);
    if (!organizationId) return sendPage(reply, renderNotFoundPage());
    const model = await inTenant(
      database.db,
      organizationId,
      { kind: 'system', id: 'booking-form', role: 'member' },
      async (ctx) => {
        const { timezone } = await requireSlug(ctx, slug).catch(() => ({ timezone: '' }));
        if (!timezone) return undefined;
        return { ...(await bookingForm(ctx, slug)), slug, today: today(timezone) };
      },
    );
    if (!model) return sendPage(reply, renderNotFoundPage());
    return sendPage(reply, renderBookingPage(model, versions));
  });

  app.get<{ Params: { name: string } }>('/book-assets/:name', options, async (request, reply) => {
    // A fixed list: nothing from the URL reaches the file system.
    const found = Object.hasOwn(FILES, request.params.name) ? assets.get(request.params.name) : undefined;
    if (!found) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
    reply.header('etag', found.etag).header('x-content-type-options', 'nosniff');
    if (request.headers['if-none-match'] === found.etag) return reply.code(304).send();
    return reply.header('cache-control', 'no-cache').type(found.type).send(found.body);
  });
}
