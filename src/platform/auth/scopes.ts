/**
 * What each kind of principal may reach, as data: the one place that decides it.
 * The access hook (platform/access.ts) consults `mayReach` with the route's
 * pattern (e.g. `/api/jobs/:id`), never the raw URL, so a path trick cannot widen it.
 * A principal kind without an entry reaches every route its role and plan allow.
 *
 * Mobile devices (operations.md §4) act as one crew member, only on crew tracking
 * (but not on device management, so a lost phone cannot mint or revoke tokens)
 * and on job reads (and "on my way" texts).
 */
export interface ScopeRule {
  /** HTTP methods the rule allows; `*` for all. */
  methods: readonly string[] | '*';
  /** The route pattern equals this prefix or continues with `/`. */
  prefix: string;
}

export interface Scope {
  allow: readonly ScopeRule[];
  /** Route patterns refused even when an `allow` rule matches (same prefix rule). */
  deny: readonly string[];
}

export const PRINCIPAL_SCOPES: Partial<Record<'user' | 'apiKey' | 'device', Scope>> = {
  device: {
    allow: [
      { methods: '*', prefix: '/api/crew-tracking' },
      { methods: ['GET', 'HEAD'], prefix: '/api/jobs' },
      // The crew taps "on my way" from the phone (operations.md §10).
      { methods: ['POST'], prefix: '/api/jobs/:id/on-my-way' },
    ],
    deny: ['/api/crew-tracking/devices'],
  },
};

const under = (url: string, prefix: string) => url === prefix || url.startsWith(`${prefix}/`);

export function mayReach(kind: 'user' | 'apiKey' | 'device', method: string, routeUrl: string): boolean {
  const scope = PRINCIPAL_SCOPES[kind];
  if (!scope) return true;
  if (scope.deny.some((p) => under(routeUrl, p))) return false;
  return scope.allow.some((r) => (r.methods === '*' || r.methods.includes(method)) && under(routeUrl, r.prefix));
}
