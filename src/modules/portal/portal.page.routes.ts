import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { StripeDeps } from '../payments/stripe/stripe-client.js';
import type { PortalHandlers } from '../portal-links/portal-links.handlers.js';
import { type PortalAssets, renderFailurePage, renderPortalPage } from './portal.html.js';
import { loadPortalPage } from './portal.page.js';

/*
 * The customer page at /portal/{token}: the emailed link (/api/portal/{token}) sends a
 * browser here, the JSON stays at /api/portal/{token} for integrators. Server-rendered
 * HTML plus two static files (no build step, no CDN); the one outside script is
 * Stripe.js, admitted by the CSP only on an invoice page that offers card payment.
 * Hidden from /openapi.json: a web page, not API.
 */

const here = dirname(fileURLToPath(import.meta.url));
const FILES: Record<string, string> = {
  'portal.js': 'text/javascript; charset=utf-8',
  'portal.css': 'text/css; charset=utf-8',
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

function loadAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const [name, type] of Object.entries(FILES)) {
    const body = readFileSync(join(here, 'public', name));
    assets.set(name, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
  }
  return assets;
}

/** The page's Content-Security-Policy: this origin only, plus Stripe.js's documented hosts when it pays by card. */
export function portalCsp(stripe: boolean): string {
  return [
    "default-src 'self'",
    `script-src 'self'${stripe ? ' https://js.stripe.com' : ''}`,
    "style-src 'self'",
    `img-src 'self' data:${stripe ? ' https://*.stripe.com' : ''}`,
    `connect-src 'self'${stripe ? ' https://api.stripe.com' : ''}`,
    `frame-src ${stripe ? 'https://js.stripe.com https://hooks.stripe.com' : "'none'"}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
}

export function registerPortalPage(app: FastifyInstance, stripe: StripeDeps, handlers: PortalHandlers): void {
  const assets = loadAssets();
  const versions: PortalAssets = {
    css: (assets.get('portal.css') as Asset).etag.slice(1, 9),
    js: (assets.get('portal.js') as Asset).etag.slice(1, 9),
  };
  const options = { schema: { hide: true }, config: { access: 'public' as const } };
  const { database } = app.deps;

  const send = (reply: FastifyReply, page: { status: number; html: string; stripe: boolean }) =>
    reply
      .code(page.status)
      .header('content-type', 'text/html; charset=utf-8')
      // A customer's document: never kept by a shared cache, never indexed, never framed.
      .header('cache-control', 'no-store')
      .header('content-security-policy', portalCsp(page.stripe))
      .header('x-content-type-options', 'nosniff')
      // The token is in the URL: no Referer to another site (Stripe included).
      .header('referrer-policy', 'same-origin')
      .header('x-robots-tag', 'noindex, nofollow')
      .send(page.html);

  app.get<{ Params: { token: string } }>('/portal/:token', options, async (request, reply) => {
    try {
      const model = await loadPortalPage(
        database.db,
        request.params.token,
        { ip: request.ip, userAgent: request.headers['user-agent'] ?? '' },
        stripe,
        handlers,
      );
      return send(reply, renderPortalPage(model, versions));
    } catch (err) {
      request.log.error({ err }, 'customer page failed');
      return send(reply, renderFailurePage(String(request.id), versions));
    }
  });

  app.get<{ Params: { name: string } }>(
    '/portal-assets/:name',
    options,
    async (request: FastifyRequest<{ Params: { name: string } }>, reply) => {
      // A fixed list: nothing from the URL reaches the file system.
      const found = Object.hasOwn(FILES, request.params.name) ? assets.get(request.params.name) : undefined;
      if (!found) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
      reply.header('etag', found.etag).header('x-content-type-options', 'nosniff');
      if (request.headers['if-none-match'] === found.etag) return reply.code(304).send();
      return reply.header('cache-control', 'no-cache').type(found.type).send(found.body);
    },
  );
}
