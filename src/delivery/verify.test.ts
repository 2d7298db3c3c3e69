import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { verifyWebhook } from './verify.js';

const secret = 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTEyMzQ=';
const other = 'whsec_b3RoZXItb3RoZXItb3RoZXItb3RoZXItb3RoZXItMTI=';
const body = '{"id":"dlv_1","event":"invoice.paid","timestamp":"2026-01-01T00:00:00.000Z","data":{"a":1}}';
const now = 1_800_000_000;
// Signed by Stripe's own test helper, not by the service's signer.
const header = (payload: string, s: string, timestamp = now) =>
  Stripe.webhooks.generateTestHeaderString({ payload, secret: s, timestamp });

describe('verifyWebhook', () => {
  it('accepts a valid signature within the tolerance', () => {
    const h = { 'x-service-signature': header(body, secret) };
    expect(verifyWebhook(body, h, secret, { nowSec: now + 299 })).toEqual({ ok: true, timestamp: now });
    expect(verifyWebhook(Buffer.from(body), h, [other, secret], { nowSec: now })).toMatchObject({ ok: true });
  });

  it('accepts any of several v1 values (rotation) and any header casing', () => {
    const a = header(body, other).split(',')[1];
    const h = { 'X-Service-Signature': `${header(body, secret)},${a}` };
    expect(verifyWebhook(body, h, other, { nowSec: now }).ok).toBe(true);
    expect(verifyWebhook(body, h, secret, { nowSec: now }).ok).toBe(true);
  });

  it('rejects stale or future timestamps, a missing t, a wrong secret, odd lengths and tampered bodies', () => {
    const h = { 'x-service-signature': header(body, secret) };
    expect(verifyWebhook(body, h, secret, { nowSec: now + 301 })).toMatchObject({ ok: false });
    expect(verifyWebhook(body, h, secret, { nowSec: now - 301 })).toMatchObject({ ok: false });
    expect(verifyWebhook(body, h, secret, { nowSec: now + 1000, toleranceSec: 2000 }).ok).toBe(true);
    expect(
      verifyWebhook(body, { 'x-service-signature': h['x-service-signature'].replace(/^t=\d+,/, '') }, secret, {
        nowSec: now,
      }),
    ).toEqual({
      ok: false,
      reason: 'signature has no timestamp',
    });
    expect(verifyWebhook(body, {}, secret, { nowSec: now }).ok).toBe(false);
    expect(verifyWebhook(body, h, other, { nowSec: now }).ok).toBe(false);
    expect(verifyWebhook(`${body} `, h, secret, { nowSec: now }).ok).toBe(false);
    expect(verifyWebhook(body, { 'x-service-signature': `t=${now},v1=abc` }, secret, { nowSec: now }).ok).toBe(false);
    expect(verifyWebhook(body, { 'x-service-signature': `t=${now}` }, secret, { nowSec: now }).ok).toBe(false);
  });
});
