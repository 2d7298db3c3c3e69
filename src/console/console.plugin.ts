import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * The web console (operations.md §8): a few static files under /app, no build step.
 * The client is Preact + htm as native ES modules, loaded from node_modules through an
 * import map; it talks only to the public API with the session cookie. Every URL under
 * /app that is not an asset answers the console's page, so deep links load the console.
 * These routes are hidden from /openapi.json: they are a web page, not API.
 */

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
/** The folder of a package's entry file (its ES module build sits beside it). */
const entryDir = (name: string) => dirname(require.resolve(name));

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

function asset(path: string): Asset {
  const body = readFileSync(path);
  const ext = path.slice(path.lastIndexOf('.'));
  return {
    body,
    type: TYPES[ext] ?? 'application/octet-stream',
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
  };
}

/** Every file the console serves, by its URL under /app/assets/ (a fixed list: no path is read from the URL). */
function loadAssets(): Map<string, Asset> {
  const publicDir = join(here, 'public');
  const assets = new Map<string, Asset>();
  for (const name of [
    'app.js',
    'api.js',
    'ui.js',
    'pages-auth.js',
    'pages-webhooks.js',
    'pages-account.js',
    'pages-schedules.js',
    'pages-books.js',
    'pages-requests.js',
    'pages-calendar.js',
    'pages-messages.js',
    'customer-documents.js',
    'console.css',
  ]) {
    assets.set(name, asset(join(publicDir, name)));
  }
  assets.set('vendor/preact.mjs', asset(join(entryDir('preact'), 'preact.mjs')));
  assets.set('vendor/preact-hooks.mjs', asset(join(entryDir('preact/hooks'), 'hooks.mjs')));
  assets.set('vendor/htm.mjs', asset(join(entryDir('htm'), 'htm.mjs')));
  return assets;
}

const IMPORT_MAP = JSON.stringify({
  imports: {
    preact: '/app/assets/vendor/preact.mjs',
    'preact/hooks': '/app/assets/vendor/preact-hooks.mjs',
    htm: '/app/assets/vendor/htm.mjs',
  },
});

function indexPage(assets: Map<string, Asset>): { html: string; csp: string } {
  const version = (name: string) => (assets.get(name) as Asset).etag.slice(1, 9);
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Console</title>
<link rel="stylesheet" href="/app/assets/console.css?v=${version('console.css')}">
<script type="importmap">${IMPORT_MAP}</script>
<script type="module" src="/app/assets/app.js?v=${version('app.js')}"></script>
</head>
<body>
<div id="root"><p class="loading">Loading the console…</p></div>
<noscript>The console needs JavaScript.</noscript>
</body>
</html>
`;
  const importMapHash = createHash('sha256').update(IMPORT_MAP).digest('base64');
  const csp = [
    "default-src 'self'",
    `script-src 'self' 'sha256-${importMapHash}'`,
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
  return { html, csp };
}

export default async function consolePlugin(app: FastifyInstance) {
  const assets = loadAssets();
  const page = indexPage(assets);
  const options = { schema: { hide: true }, config: { access: 'public' as const } };

  const sendPage = (reply: FastifyReply) =>
    reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('content-security-policy', page.csp)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin')
      .send(page.html);

  // A browser opened on the service's origin finds its way: `/` points to the console and the
  // docs (it answered a JSON 404 before), and `/console`, the name people guess, goes to /app/.
  app.get('/', options, async (_request: FastifyRequest, reply: FastifyReply) =>
    reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('content-security-policy', LANDING_CSP)
      .header('x-content-type-options', 'nosniff')
      .send(LANDING),
  );
  app.get('/console', options, async (request: FastifyRequest, reply: FastifyReply) =>
    reply.redirect(`/app/${splitUrl(request.url)[1]}`, 302),
  );

  // ignoreTrailingSlash makes /app and /app/ one route: tell them apart by the raw URL.
  app.get('/app', options, async (request: FastifyRequest, reply: FastifyReply) => {
    const [path, query] = splitUrl(request.url);
    if (path === '/app') return reply.redirect(`/app/${query}`, 302);
    return sendPage(reply);
  });

  app.get('/app/*', options, async (request: FastifyRequest, reply: FastifyReply) => {
    const [path] = splitUrl(request.url);
    if (path.startsWith('/app/assets/')) {
      const found = assets.get(path.slice('/app/assets/'.length));
      if (!found) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
      reply.header('etag', found.etag).header('x-content-type-options', 'nosniff');
      if (request.headers['if-none-match'] === found.etag) return reply.code(304).send();
      return reply.header('cache-control', 'no-cache').type(found.type).send(found.body);
    }
    return sendPage(reply);
  });
}

const LANDING = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Field-Service CRM</title>
<link rel="stylesheet" href="/app/assets/console.css">
</head>
<body>
<main class="landing">
<h1>Field-Service CRM</h1>
<ul>
<li><a href="/app/">Console</a>: sign in, dashboard, schedules, webhooks, API keys, exports</li>
<li><a href="/docs">API reference</a> (<a href="/openapi.json">OpenAPI document</a>)</li>
</ul>
</main>
</body>
</html>
`;
const LANDING_CSP = "default-src 'none'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'";

function splitUrl(url: string): [string, string] {
  const i = url.indexOf('?');
  return i < 0 ? [url, ''] : [url.slice(0, i), url.slice(i)];
}
