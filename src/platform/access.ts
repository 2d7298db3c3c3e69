import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Db } from '../db/client.js';
import {
  actorOf,
  type Feature,
  hasFeature,
  type Principal,
  type PrincipalResolver,
  planRequiredMessage,
  presentedCredential,
} from './auth/principal.js';
import { mayReach } from './auth/scopes.js';
import { AppError } from './errors.js';
import { consumeRequest, type Limiters, type RouteRateLimit, routeBudget } from './rate-limit.js';
import { type Actor, type Ctx, inTenant, type Role } from './tenancy.js';

/**
 * Who may call a route, declared in its `config`:
 *  - `public`: anyone (health, docs, auth, portal);
 *  - `user`: a signed-in user, no organization needed (creating/listing organizations);
 *  - `tenant` (default for every /api route): a principal acting in an active organization.
 * `roles` narrows a tenant route to some roles; `feature` to plans that include it.
 */
export type Access = 'public' | 'user' | 'tenant';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
    roles?: readonly Role[];
    feature?: Feature;
    /** Public routes: a budget of the route's own, checked after the caller's general one. */
    rateLimit?: RouteRateLimit;
    /**
     * Public routes: the route counts the caller's general budget itself, after a cheaper check of its
     * own (the booking form's per-address limit, refused from process memory under a flood, comes
     * before the general budget's round trip to Redis).
     */
    countsGeneralLimit?: boolean;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export interface TenantRef {
  organizationId: string;
  actor: Actor;
}

/** The tenant and actor of a request on a `tenant` route (guaranteed by the hook). */
export function tenantOf(request: { principal: Principal | null }): TenantRef {
  const p = request.principal;
  if (!p?.organizationId) throw new AppError('NO_ACTIVE_ORGANIZATION', 'No active organization');
  return { organizationId: p.organizationId, actor: actorOf(p) };
}

/** Runs a service call in the request's tenant: one transaction as the RLS role, tenant and actor set. */
export function inRequestTenant<T>(db: Db, request: { principal: Principal | null }, fn: (ctx: Ctx) => Promise<T>) {
  const t = tenantOf(request);
  return inTenant(db, t.organizationId, t.actor, fn);
}

/** The signed-in user of a `user` route. */
export function userOf(request: { principal: Principal | null }): string {
  const id = request.principal?.userId;
  if (!id) throw new AppError('UNAUTHENTICATED', 'Sign in with a user session for this route');
  return id;
}

/**
 * The /api prefixes that answer without credentials (spec 5.2: "all API requests except
 * auth endpoints require authentication"): Better Auth, the customer portal's token
 * links, Stripe's signed event callbacks, and the public booking form (`/api/public/{slug}`).
 */
const OPEN_API_PREFIXES = ['/api/auth', '/api/portal', '/api/payments/stripe', '/api/public'] as const;

/** True for a path under /api that needs credentials whether or not a route matches it. */
export function apiPathNeedsCredentials(url: string): boolean {
  const path = url.split('?')[0] ?? '';
  if (path !== '/api' && !path.startsWith('/api/')) return false;
  return !OPEN_API_PREFIXES.some((p) => path === p || path.startsWith(`${p}/`));
}

async function accessPlugin(app: FastifyInstance, opts: { resolver: PrincipalResolver; limiters: Limiters }) {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request, reply) => {
    const route = request.routeOptions;
    // No route matched (unknown path, or a method the path does not have): under /api the
    // caller must still authenticate first, so that 404 tells only a signed-in caller
    // which paths exist (spec 5.2: unauthenticated → 401).
    const unmatched = route.url === undefined;
    if (unmatched && !apiPathNeedsCredentials(request.url)) return;
    const access: Access = unmatched
      ? 'user'
      : (route.config.access ?? (route.url?.startsWith('/api/') ? 'tenant' : 'public'));
    if (access === 'public') {
      if (route.url?.startsWith('/api/') && !route.config.countsGeneralLimit) {
        reply.headers(await consumeRequest(opts.limiters, `ip:${request.ip}`));
      }
      const own = route.config.rateLimit;
      if (own)
        reply.headers(await consumeRequest(opts.limiters, own.key?.(request) ?? `ip:${request.ip}`, routeBudget(own)));
      return;
    }
    // Failed authentication counts against the caller's IP, so guessing keys or cookies is throttled too.
    const principal = await opts.resolver.resolve(request.headers).catch(async (err: unknown) => {
      reply.headers(await consumeRequest(opts.limiters, `ip:${request.ip}`));
      throw err;
    });
    if (!principal) {
      reply.headers(await consumeRequest(opts.limiters, `ip:${request.ip}`));
      const presented = presentedCredential(request.headers);
      throw new AppError(
        'UNAUTHENTICATED',
        presented === 'apiKey'
          ? 'Invalid API key: it is malformed, unknown or revoked'
          : presented === 'session'
            ? 'Invalid or expired session: sign in again'
            : 'Authentication required: sign in or send an API key',
      );
    }
    request.principal = principal;
    for (const cookie of principal.setCookies) reply.header('set-cookie', cookie);
    const key =
      principal.kind === 'apiKey'
        ? `key:${principal.apiKeyId}`
        : principal.kind === 'device'
          ? `device:${principal.deviceId}`
          : `user:${principal.userId}:${principal.organizationId ?? '-'}`;
    reply.headers(await consumeRequest(opts.limiters, key));
    if (unmatched) return; // authenticated: the not-found handler answers 404
    if (!mayReach(principal.kind, request.method, route.url ?? '')) {
      throw new AppError('FORBIDDEN', `This credential (${principal.kind}) may not use ${request.method} ${route.url}`);
    }
    if (principal.kind === 'apiKey' && !hasFeature(principal.plan, 'apiAccess')) {
      throw new AppError('PLAN_REQUIRED', planRequiredMessage('apiAccess', principal.plan));
    }
    if (access === 'user') {
      if (principal.kind !== 'user') throw new AppError('FORBIDDEN', 'This route needs a user session, not an API key');
      return;
    }
    if (!principal.organizationId) {
      throw new AppError(
        'NO_ACTIVE_ORGANIZATION',
        'No active organization: create one (POST /api/organizations) or activate one',
      );
    }
    const feature = route.config.feature;
    if (feature && !hasFeature(principal.plan, feature)) {
      throw new AppError('PLAN_REQUIRED', planRequiredMessage(feature, principal.plan));
    }
    const roles = route.config.roles;
    if (roles && !roles.includes(principal.role as Role)) {
      throw new AppError('FORBIDDEN', `This action requires one of the roles: ${roles.join(', ')}`);
    }
  });
}

export const access = fp(accessPlugin, { name: 'access' });
