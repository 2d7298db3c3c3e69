import type { RegisteredRoute } from './openapi.js';

const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** A route URL (`/api/customers/:id`, `/api/auth/*`) as a whole-path pattern. */
function patternOf(url: string): RegExp {
  const escaped = url
    .split('/')
    .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${escaped}/?$`);
}

/**
 * The methods a path answers, for a 405 `Allow` header when it exists with another method
 * (empty when the path is unknown: that stays 404). Matched against every registered route,
 * so routes added later count without anything to update. OPTIONS (CORS preflight) is left out.
 */
export function allowedMethods(routes: readonly RegisteredRoute[], path: string): string[] {
  const methods = new Set<string>();
  for (const route of routes) {
    if (route.method === 'OPTIONS' || route.url === '*' || route.url === '/*') continue;
    route.pattern ??= patternOf(route.url);
    if (route.pattern.test(path)) methods.add(route.method);
  }
  return [...methods].sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b));
}
