import { createRequire } from 'node:module';
import type Stripe from 'stripe';
import type { Config } from '../../../config.js';
import { AppError, invalidField, invalidState } from '../../../platform/errors.js';
import { SecretBox } from '../../../platform/secrets.js';
import type { OrgSettings } from '../../settings/settings.service.js';

/** What the payments module needs to call Stripe: the box that opens stored keys, and where the API is. */
export interface StripeDeps {
  box: SecretBox;
  api: Config['stripeApi'];
}

export const STRIPE_NOT_CONFIGURED =
  'Stripe is not configured for this organization: an owner or admin sets the secret API key with PATCH /api/settings {"stripeSecretKey": "sk_live_…"} (and stripeWebhookSecret for the endpoint POST /api/payments/stripe/{organizationId})';

const depsByConfig = new WeakMap<Config, StripeDeps>();

/** The one StripeDeps of a running app (the payments and portal routes share it). */
export function stripeDeps(config: Config): StripeDeps {
  let deps = depsByConfig.get(config);
  if (!deps) {
    deps = { box: new SecretBox(config.authSecret), api: config.stripeApi };
    depsByConfig.set(config, deps);
  }
  return deps;
}

/** The organization's Stripe secret key, or null when none is usable. */
export function stripeKeyOrNull(settings: OrgSettings, box: SecretBox): string | null {
  if (!settings.stripeSecretKeySealed) return null;
  try {
    return box.open(settings.stripeSecretKeySealed);
  } catch {
    // Sealed under another AUTH_SECRET: as good as unset until an admin sets it again.
    return null;
  }
}

/** The organization's Stripe secret key, or 409 INVALID_STATE saying how to set it. */
export function stripeKeyOf(settings: OrgSettings, box: SecretBox): string {
  const key = stripeKeyOrNull(settings, box);
  if (key === null) throw invalidState(STRIPE_NOT_CONFIGURED);
  return key;
}

/**
 * The official SDK, loaded with the first Stripe call or event: importing it cost about 0.15 s of
 * CPU at every start, before /readyz, for an integration an organization uses once it has set its
 * key. A synchronous require (its CommonJS build) keeps these functions as they were, and every
 * caller here uses this one copy, so its error classes are the ones its calls throw.
 */
let loaded: typeof Stripe | undefined;
export function stripeSdk(): typeof Stripe {
  loaded ??= createRequire(import.meta.url)('stripe') as typeof Stripe;
  return loaded;
}

/** The official SDK, with the organization's key; `api` (STRIPE_API_BASE) only moves where it calls. */
export function stripeClient(key: string, api: StripeDeps['api']): Stripe {
  const StripeSdk = stripeSdk();
  return new StripeSdk(key, {
    maxNetworkRetries: 2,
    timeout: 20_000,
    telemetry: false,
    ...(api ? { host: api.host, port: api.port, protocol: api.protocol } : {}),
  });
}

/** A Stripe failure as our error: a refused key is the organization's to fix (409); anything else 503. */
export function stripeFailure(err: unknown): AppError {
  // Only a loaded SDK throws its errors.
  const Stripe = loaded;
  if (Stripe === undefined) return stripeUnreachable();
  if (err instanceof Stripe.errors.StripeAuthenticationError || err instanceof Stripe.errors.StripePermissionError) {
    return invalidState(
      `Stripe refused the organization's secret API key (${err.message}); set a valid one with PATCH /api/settings {"stripeSecretKey": …}`,
    );
  }
  if (err instanceof Stripe.errors.StripeInvalidRequestError || err instanceof Stripe.errors.StripeCardError) {
    return new AppError('CONFLICT', `Stripe refused the request: ${err.message}`);
  }
  return stripeUnreachable();
}

const stripeUnreachable = () =>
  new AppError('SERVICE_UNAVAILABLE', 'Stripe could not be reached; nothing was recorded, try again');

/*
 * Stripe amounts are in the currency's minor unit, which is not always a cent:
 * zero-decimal currencies count whole units and three-decimal ones thousandths.
 * UGX and ISK are zero-decimal for Stripe but sent with two decimals for backwards
 * compatibility, so they stay out of the zero-decimal list (Stripe's currency docs).
 */
const ZERO_DECIMAL = new Set([
  'BIF',
  'CLP',
  'DJF',
  'GNF',
  'JPY',
  'KMF',
  'KRW',
  'MGA',
  'PYG',
  'RWF',
  'VND',
  'VUV',
  'XAF',
  'XOF',
  'XPF',
]);
const THREE_DECIMAL = new Set(['BHD', 'JOD', 'KWD', 'OMR', 'TND']);

/** Stripe minor units → our integer cents, exactly (an amount cents cannot hold is a 400). */
export function stripeAmountToCents(amount: unknown, currency: string, field: string): number {
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 0) {
    throw invalidField(field, 'must be a non-negative integer amount in minor units');
  }
  const code = currency.toUpperCase();
  if (ZERO_DECIMAL.has(code)) return amount * 100;
  if (THREE_DECIMAL.has(code)) {
    if (amount % 10 !== 0) throw invalidField(field, `${amount} ${code} thousandths is not a whole cent`);
    return amount / 10;
  }
  return amount;
}

/** Our integer cents → Stripe minor units (a fraction of a zero-decimal unit is a 400). */
export function centsToStripeAmount(cents: number, currency: string, field: string): number {
  const code = currency.toUpperCase();
  if (ZERO_DECIMAL.has(code)) {
    if (cents % 100 !== 0) throw invalidField(field, `${code} has no minor unit: use a whole amount`);
    return cents / 100;
  }
  if (THREE_DECIMAL.has(code)) return cents * 10;
  return cents;
}
