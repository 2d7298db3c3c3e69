import { createHmac } from 'node:crypto';

/**
 * Both signature schemes a delivery carries (spec 6.4, decisions §5):
 *  - X-Service-Signature `t=<s>,v1=<hex>[,v1=<hex>]`: HMAC-SHA256 of `t.body`, keyed
 *    with the secret string's UTF-8 bytes (what Stripe's verifier expects);
 *  - Standard Webhooks `webhook-signature: v1,<base64>[ v1,<base64>]`: HMAC-SHA256 of
 *    `id.t.body`, keyed with the base64-decoded part after `whsec_`.
 * `secrets` lists the current secret first, then the previous one during rotation.
 */
export function signatureHeaders(
  secrets: readonly string[],
  deliveryId: string,
  body: string,
  timestampSec: number,
): Record<string, string> {
  const service = secrets.map((s) => `v1=${createHmac('sha256', s).update(`${timestampSec}.${body}`).digest('hex')}`);
  const standard = secrets.map(
    (s) =>
      `v1,${createHmac('sha256', standardKey(s)).update(`${deliveryId}.${timestampSec}.${body}`).digest('base64')}`,
  );
  return {
    'x-service-signature': `t=${timestampSec},${service.join(',')}`,
    'webhook-id': deliveryId,
    'webhook-timestamp': String(timestampSec),
    'webhook-signature': standard.join(' '),
  };
}

function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
}
