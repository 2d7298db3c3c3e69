import { createHash } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import { PLANS, type Plan } from '../../config.js';
import type { Db } from '../../db/client.js';
import { isDatabaseUnavailable } from '../../db/pg-errors.js';
import { apiKeys, members, organizations } from '../../db/schema/index.js';
import { asPlatform } from '../cross-tenant.js';
import { AppError } from '../errors.js';
import { type Actor, type Role, withTenant } from '../tenancy.js';
import type { Auth } from './better-auth.js';
import { resolveDeviceToken } from './device-tokens.js';
import type { GenerationReader } from './revocations.js';

/** Who sent a request, resolved once per request (and cached briefly, see below). */
export interface Principal {
  /** `device`: a mobile device token (`dev_…`) acting as one member (platform/auth/scopes.ts limits it). */
  kind: 'user' | 'apiKey' | 'device';
  userId: string | undefined;
  apiKeyId: string | undefined;
  /** The device token's id, for `device` principals. */
  deviceId?: string | undefined;
  sessionId: string | undefined;
  /** The organization tenant routes act on; undefined for a user with none active. */
  organizationId: string | undefined;
  role: Role | undefined;
  plan: Plan | undefined;
  /** A refreshed session cookie to pass on to the client (Better Auth's daily extension). */
  setCookies: string[];
}

export const FEATURES = { webhooks: ['business'], apiAccess: ['business'] } as const satisfies Record<
  string,
  readonly Plan[]
>;
export type Feature = keyof typeof FEATURES;

const FEATURE_NAMES: Record<Feature, string> = { webhooks: 'Webhooks', apiAccess: 'API keys' };
const planName = (plan: Plan) => `${plan.charAt(0).toUpperCase()}${plan.slice(1)}`;

/** "Webhooks require the Business plan; this organization is on the Pro plan" (no internal feature key). */
export function planRequiredMessage(feature: Feature, current: Plan | undefined): string {
  const needed = PLANS.find((p) => (FEATURES[feature] as readonly Plan[]).includes(p)) as Plan;
  const on = current ? `; this organization is on the ${planName(current)} plan` : '';
  return `${FEATURE_NAMES[feature]} require the ${planName(needed)} plan${on}`;
}

/** Which credential a request presents, for telling "invalid key" from "no credentials". */
export function presentedCredential(
  headers: Record<string, string | string[] | undefined>,
): 'apiKey' | 'session' | undefined {
  if (headers.authorization || headers['x-api-key']) return 'apiKey';
  const cookie = headers.cookie;
  return typeof cookie === 'string' && cookie.includes('session_token') ? 'session' : undefined;
}

export function hasFeature(plan: Plan | undefined, feature: Feature): boolean {
  return plan !== undefined && (FEATURES[feature] as readonly Plan[]).includes(plan);
}

/** A device acts as its member's user, so services see the member (and their role) as the actor. */
export function actorOf(p: Principal): Actor {
  if (p.kind === 'apiKey') return { kind: 'apiKey', id: p.apiKeyId as string, role: p.role as Role };
  return { kind: 'user', id: p.userId as string, role: p.role as Role };
}

export const hashApiKey = (key: string) => createHash('sha256').update(key).digest('hex');

/**
 * Resolving a session costs Better Auth ~1 ms of CPU and two queries, so a resolved
 * principal is cached in process for CACHE_TTL_MS, keyed by the credential itself.
 * A revocation still takes effect in EVERY process before the revoking request
 * answers: each entry is stamped with the revocation generation and served only while
 * a generation read made after the request arrived still shows it (revocations.ts
 * states the guarantee and how it is kept cheap).
 */
const CACHE_TTL_MS = 5_000;
const CACHE_MAX = 10_000;

export class PrincipalResolver {
  private readonly cache = new Map<string, { value: Principal | null; expires: number; generation: string }>();

  /**
   * @param generations the revocation generation (PostgreSQL, several processes);
   *   undefined on the embedded database, where this process is the only one.
   */
  constructor(
    private readonly auth: Auth,
    private readonly db: Db,
    private readonly generations?: GenerationReader,
  ) {}

  /**
   * Drops every cached principal of this process: when a revocation is announced, and
   * after a route's revoking transaction commits. Other processes need nothing from the
   * route: the revocation bumped auth_generation inside that transaction (a trigger,
   * revocations.ts), so they stop serving entries from before it at once.
   */
  invalidate(): void {
    this.cache.clear();
  }

  async resolve(headers: Record<string, string | string[] | undefined>): Promise<Principal | null> {
    const key = apiKeyFrom(headers);
    if (key?.startsWith('dev_')) return this.cached(`d:${key}`, () => this.fromDevice(key));
    if (key !== undefined) return this.cached(`k:${key}`, () => this.fromApiKey(key));
    const cookie = headers.cookie;
    if (typeof cookie === 'string' && cookie.includes('session_token')) {
      return this.cached(`c:${cookie}`, () => this.fromSession(cookie));
    }
    return null;
  }

  private async cached(key: string, load: () => Promise<Principal | null>): Promise<Principal | null> {
    // Read before the load: a revocation committed after this read changes the generation,
    // so the entry stored below is never served past it.
    const generation = this.generations ? await this.generations.read() : '';
    const now = Date.now();
    const hit = this.cache.get(key);
    if (hit && hit.expires > now && hit.generation === generation) return hit.value;
    const value = await load();
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(key, { value, expires: now + CACHE_TTL_MS, generation });
    return value;
  }

  private async fromApiKey(key: string): Promise<Principal | null> {
    if (!/^sk_[A-Za-z0-9_-]{20,100}$/.test(key)) return null;
    // Platform lookup across tenants: the key itself is what tells us the tenant.
    const [row] = await asPlatform(this.db, (tx) =>
      tx
        .select({
          id: apiKeys.id,
          organizationId: apiKeys.organizationId,
          role: apiKeys.role,
          plan: organizations.plan,
        })
        .from(apiKeys)
        .innerJoin(organizations, eq(organizations.id, apiKeys.organizationId))
        .where(and(eq(apiKeys.keyHash, hashApiKey(key)), isNull(apiKeys.revokedAt)))
        .limit(1),
    );
    if (!row) return null;
    const keyId = row.id;
    void withTenant(this.db, row.organizationId, (tx) =>
      tx
        .update(apiKeys)
        .set({ lastUsedAt: new Date() })
        .where(and(eq(apiKeys.organizationId, row.organizationId), eq(apiKeys.id, keyId))),
    ).catch(() => {});
    return {
      kind: 'apiKey',
      userId: undefined,
      apiKeyId: row.id,
      sessionId: undefined,
      organizationId: row.organizationId,
      role: row.role as Role,
      plan: row.plan as Plan,
      setCookies: [],
    };
  }

  private async fromDevice(token: string): Promise<Principal | null> {
    if (!/^dev_[A-Za-z0-9_-]{20,100}$/.test(token)) return null;
    const row = await resolveDeviceToken(this.db, hashApiKey(token));
    if (!row) return null;
    return {
      kind: 'device',
      userId: row.userId,
      apiKeyId: undefined,
      deviceId: row.id,
      sessionId: undefined,
      organizationId: row.organizationId,
      role: row.role as Role,
      plan: row.plan as Plan,
      setCookies: [],
    };
  }

  private async fromSession(cookie: string): Promise<Principal | null> {
    // returnHeaders: when Better Auth extends the session (once a day) it re-issues the cookie,
    // and that Set-Cookie must reach the browser or the cookie expires before the session does.
    // A session that cannot be read is "no session" (401), unless the database could not be
    // reached: that is rethrown for the error handler to answer 503, never read as signed out.
    const answer = await this.auth.api
      .getSession({ headers: new Headers({ cookie }), returnHeaders: true })
      .catch((err: unknown) => {
        if (isDatabaseUnavailable(err)) throw err;
        return null;
      });
    const result = answer?.response;
    if (!result) return null;
    const setCookies = answer.headers?.getSetCookie?.() ?? [];
    const activeOrg = (result.session as { activeOrganizationId?: string | null }).activeOrganizationId ?? undefined;
    let role: Role | undefined;
    let plan: Plan | undefined;
    let organizationId: string | undefined;
    if (activeOrg) {
      const userId = result.user.id;
      const [m] = await asPlatform(this.db, (tx) =>
        tx
          .select({ role: members.role, plan: organizations.plan })
          .from(members)
          .innerJoin(organizations, eq(organizations.id, members.organizationId))
          .where(and(eq(members.organizationId, activeOrg), eq(members.userId, userId)))
          .limit(1),
      );
      if (m) {
        organizationId = activeOrg;
        role = m.role as Role;
        plan = m.plan as Plan;
      }
    }
    return {
      kind: 'user',
      userId: result.user.id,
      apiKeyId: undefined,
      sessionId: result.session.id,
      organizationId,
      role,
      plan,
      setCookies,
    };
  }
}

function apiKeyFrom(headers: Record<string, string | string[] | undefined>): string | undefined {
  const auth = headers.authorization;
  if (typeof auth === 'string' && auth.length > 0) {
    const m = /^Bearer\s+(\S+)$/i.exec(auth);
    if (!m) throw new AppError('UNAUTHENTICATED', 'Authorization header must be "Bearer <api key>"');
    return m[1] as string;
  }
  const x = headers['x-api-key'];
  if (typeof x === 'string' && x.length > 0) return x;
  return undefined;
}
