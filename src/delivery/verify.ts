import { createHmac, timingSafeEqual } from 'node:crypto';

export interface VerifyOptions {
  /** Allowed difference between `t` and now, in seconds (spec: 300 in the reference verifier). */
  toleranceSec?: number;
  /** Current time in Unix seconds (tests). */
  nowSec?: number;
}

export type VerifyResult = { ok: true; timestamp: number } | { ok: false; reason: string };

/**
 * The reference receiver check (spec 6.4 rule 4) for `X-Service-Signature`:
 * parse `t` and every `v1`; reject a missing `t` or one outside the tolerance;
 * compute HMAC-SHA256(secret, `t.rawBody`) for each accepted secret; compare each
 * `v1` in constant time after checking equal length. `rawBody` must be the bytes
 * received: re-serialised JSON does not match.
 */
export function verifyWebhook(
  rawBody: string | Buffer,
  headers: Record<string, string | string[] | undefined>,
  secrets: string | readonly string[],
  { toleranceSec = 300, nowSec = Math.floor(Date.now() / 1000) }: VerifyOptions = {},
): VerifyResult {
  const raw = headerValue(headers, 'x-service-signature');
  if (!raw) return { ok: false, reason: 'missing X-Service-Signature header' };
  let t: number | undefined;
  const candidates: string[] = [];
  for (const part of raw.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) t = Number(value);
    else if (key === 'v1') candidates.push(value);
  }
  if (t === undefined) return { ok: false, reason: 'signature has no timestamp' };
  if (Math.abs(nowSec - t) > toleranceSec) return { ok: false, reason: 'timestamp outside the tolerance' };
  if (candidates.length === 0) return { ok: false, reason: 'signature has no v1 value' };
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  for (const secret of typeof secrets === 'string' ? [secrets] : secrets) {
    const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex'), 'utf8');
    for (const candidate of candidates) {
      const given = Buffer.from(candidate, 'utf8');
      if (given.length === expected.length && timingSafeEqual(given, expected)) return { ok: true, timestamp: t };
    }
  }
  return { ok: false, reason: 'no signature matches' };
}

function headerValue(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const direct = headers[name] ?? Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(direct) ? direct[0] : direct;
}
