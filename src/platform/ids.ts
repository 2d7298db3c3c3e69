import { randomBytes } from 'node:crypto';

/**
 * Opaque, prefixed ids (`cus_…`, `inv_…`). The first 9 characters encode the
 * creation time so ids sort roughly by creation, which keeps B-tree inserts local.
 */
const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

export function newId(prefix: string): string {
  const time = Date.now().toString(36).padStart(9, '0');
  const bytes = randomBytes(14);
  let rand = '';
  for (const b of bytes) rand += ALPHABET[b % 36];
  return `${prefix}_${time}${rand}`;
}

/** A random token for secrets and links: url-safe base64 of `bytes` random bytes. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
