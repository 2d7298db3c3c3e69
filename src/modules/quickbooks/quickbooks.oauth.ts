import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createRequire } from 'node:module';
import type OAuthClientClass from 'intuit-oauth';
import type { Config } from '../../config.js';
import { AppError, invalidState } from '../../platform/errors.js';

/*
 * OAuth 2 with Intuit through its own client, `intuit-oauth` (the authorize URL, the code
 * exchange, refresh and revoke, with Intuit's Basic-auth and form encoding): operations.md §11.
 * Its endpoints are static on the class; QUICKBOOKS_OAUTH_BASE swaps their origin, paths kept.
 */

const INTUIT_ENDPOINTS = {
  authorizeEndpoint: 'https://appcenter.intuit.com/connect/oauth2',
  tokenEndpoint: 'https://oauth.platform.intuit.com/oauth2/v1/tokens/bearer',
  revokeEndpoint: 'https://developer.api.intuit.com/v2/oauth2/tokens/revoke',
  userInfoEndpoint: 'https://accounts.platform.intuit.com/v1/openid_connect/userinfo',
};

/** How long a `state` handed out by connect may come back in the callback. */
export const STATE_TTL_MS = 10 * 60_000;

export function redirectUri(config: Config): string {
  return `${config.baseUrl}/api/integrations/quickbooks/callback`;
}

/**
 * intuit-oauth (a CommonJS package), loaded with the first QuickBooks call: importing it (axios
 * and its own dependencies) cost about 0.35 s of CPU at every start, before /readyz, for an
 * integration most organizations never connect. A synchronous require keeps these functions as
 * they were.
 */
let loaded: typeof OAuthClientClass | undefined;
function intuitOAuth(): typeof OAuthClientClass {
  if (!loaded) {
    loaded = createRequire(import.meta.url)('intuit-oauth') as typeof OAuthClientClass;
    // The client's own retries (1 s, 2 s, 4 s on 429/5xx) would hold a request or a sync worker;
    // a failed exchange answers at once and the sync's own backoff retries a failed refresh.
    loaded.retryConfig.maxRetries = 0;
  }
  return loaded;
}

/** The app's client, or 409 when the keys are not configured. */
export function oauthClient(config: Config): OAuthClientClass {
  const { clientId, clientSecret, oauthBase } = config.quickbooks;
  if (!clientId || !clientSecret) {
    throw invalidState(
      'QuickBooks is not configured on this server: set QUICKBOOKS_CLIENT_ID and QUICKBOOKS_CLIENT_SECRET (the app’s keys from developer.intuit.com)',
    );
  }
  const OAuthClient = intuitOAuth();
  const client = new OAuthClient({
    clientId,
    clientSecret,
    environment: 'production',
    redirectUri: redirectUri(config),
  });
  const swap = (url: string) => (oauthBase ? oauthBase + new URL(url).pathname : url);
  client.setAuthorizeURLs({
    authorizeEndpoint: swap(INTUIT_ENDPOINTS.authorizeEndpoint),
    tokenEndpoint: swap(INTUIT_ENDPOINTS.tokenEndpoint),
    revokeEndpoint: swap(INTUIT_ENDPOINTS.revokeEndpoint),
    userInfoEndpoint: swap(INTUIT_ENDPOINTS.userInfoEndpoint),
  });
  return client;
}

export interface TokenSet {
  accessToken: string;
  refreshToken: string;
  accessExpiresAt: Date;
  refreshExpiresAt: Date | null;
}

function tokensOf(json: Record<string, unknown> | null | undefined, now = Date.now()): TokenSet {
  const access = typeof json?.access_token === 'string' ? json.access_token : '';
  const refresh = typeof json?.refresh_token === 'string' ? json.refresh_token : '';
  if (!access || !refresh) throw new Error('Intuit answered without tokens');
  const expiresIn = Number(json?.expires_in) || 3600;
  const refreshIn = Number(json?.x_refresh_token_expires_in) || 0;
  return {
    accessToken: access,
    refreshToken: refresh,
    accessExpiresAt: new Date(now + expiresIn * 1000),
    refreshExpiresAt: refreshIn > 0 ? new Date(now + refreshIn * 1000) : null,
  };
}

/** What Intuit said when it refused (its `error`/`error_description`), for people. */
export function intuitRefusal(err: unknown): string {
  const e = err as {
    authResponse?: { json?: Record<string, unknown> };
    error?: string;
    error_description?: string;
    message?: string;
  };
  const json = e?.authResponse?.json;
  const text = [json?.error ?? e?.error, json?.error_description ?? e?.error_description].filter(Boolean).join(': ');
  return text || e?.message || 'no answer';
}

/** Exchanges the callback's code for tokens (the callback's whole query, as intuit-oauth reads it). */
export async function exchangeCode(config: Config, query: string): Promise<TokenSet> {
  const client = oauthClient(config);
  try {
    const res = await client.createToken(`${redirectUri(config)}?${query}`);
    return tokensOf(res.getJson() as Record<string, unknown>);
  } catch (err) {
    throw new AppError('INVALID_STATE', `Intuit refused the authorization code (${intuitRefusal(err)}); connect again`);
  }
}

/** A new access token (and the rotated refresh token) for a refresh token. Throws Intuit's refusal. */
export async function refreshTokens(config: Config, refreshToken: string): Promise<TokenSet> {
  const res = await oauthClient(config).refreshUsingToken(refreshToken);
  return tokensOf(res.getJson() as Record<string, unknown>);
}

/** Revokes the grant at Intuit (best effort: a disconnect never depends on it). */
export async function revokeTokens(config: Config, refreshToken: string): Promise<boolean> {
  try {
    await oauthClient(config).revoke({ refresh_token: refreshToken });
    return true;
  } catch {
    return false;
  }
}

export function authorizeUrl(config: Config, state: string): string {
  return oauthClient(config).authorizeUri({ scope: [intuitOAuth().scopes.Accounting], state });
}

/*
 * `state`: the organization and user it was made for and when it expires, signed with an HMAC
 * under a key derived from AUTH_SECRET. Nothing is stored: a forged one fails the signature, an
 * old one its expiry, one made for another organization or user the callback's check.
 */
const b64 = (b: Buffer) => b.toString('base64url');
const stateKey = (config: Config) =>
  createHmac('sha256', config.authSecret).update('quickbooks-oauth-state v1').digest();

export function signState(config: Config, organizationId: string, userId: string, now = Date.now()): string {
  const body = b64(
    Buffer.from(JSON.stringify({ o: organizationId, u: userId, e: now + STATE_TTL_MS, n: b64(randomBytes(9)) })),
  );
  return `${body}.${b64(createHmac('sha256', stateKey(config)).update(body).digest())}`;
}

export type StateCheck =
  | { ok: true; organizationId: string; userId: string }
  | { ok: false; reason: 'forged' | 'expired' };

export function readState(config: Config, state: string, now = Date.now()): StateCheck {
  const [body, mac] = state.split('.');
  if (!body || !mac) return { ok: false, reason: 'forged' };
  const want = createHmac('sha256', stateKey(config)).update(body).digest();
  const got = Buffer.from(mac, 'base64url');
  if (got.length !== want.length || !timingSafeEqual(got, want)) return { ok: false, reason: 'forged' };
  let parsed: { o?: unknown; u?: unknown; e?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'forged' };
  }
  if (typeof parsed.o !== 'string' || typeof parsed.u !== 'string' || typeof parsed.e !== 'number')
    return { ok: false, reason: 'forged' };
  if (parsed.e < now) return { ok: false, reason: 'expired' };
  return { ok: true, organizationId: parsed.o, userId: parsed.u };
}
