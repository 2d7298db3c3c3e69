import { describe, expect, it } from 'vitest';
import { ConfigError, configSummary, loadConfig } from '../../src/config.js';
import { centsToStripeAmount, stripeAmountToCents } from '../../src/modules/payments/stripe/stripe-client.js';

describe('STRIPE_API_BASE and Stripe amounts', () => {
  it('leaves the SDK on api.stripe.com unless STRIPE_API_BASE names an origin', () => {
    expect(loadConfig({}).stripeApi).toBeUndefined();
    expect(configSummary(loadConfig({})).stripeApi).toBe('api.stripe.com');
    expect(loadConfig({ STRIPE_API_BASE: 'http://127.0.0.1:12111' }).stripeApi).toEqual({
      host: '127.0.0.1',
      port: 12111,
      protocol: 'http',
    });
    expect(loadConfig({ STRIPE_API_BASE: 'https://stripe-mock.internal' }).stripeApi).toEqual({
      host: 'stripe-mock.internal',
      port: 443,
      protocol: 'https',
    });
    for (const bad of ['not a url', 'ftp://x', 'http://127.0.0.1:1/v1']) {
      expect(() => loadConfig({ STRIPE_API_BASE: bad }), bad).toThrow(ConfigError);
    }
  });

  it('converts cents to and from the currency’s minor unit exactly', () => {
    expect(centsToStripeAmount(12050, 'USD', 'amount')).toBe(12050);
    expect(centsToStripeAmount(150000, 'JPY', 'amount')).toBe(1500);
    expect(() => centsToStripeAmount(150050, 'JPY', 'amount')).toThrow(/whole amount/);
    expect(centsToStripeAmount(1234, 'KWD', 'amount')).toBe(12340);
    for (const [cents, code] of [
      [12050, 'USD'],
      [150000, 'JPY'],
      [1234, 'KWD'],
    ] as const) {
      expect(stripeAmountToCents(centsToStripeAmount(cents, code, 'a'), code, 'a')).toBe(cents);
    }
  });
});
