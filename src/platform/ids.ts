import { randomBytes, randomFillSync } from 'node:crypto';

/**
 * Opaque, prefixed ids (`cus_…`, `inv_…`). The first 9 characters encode the
 * creation time so ids sort roughly by creation, which keeps B-tree inserts local.
 */
const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

const RANDOM_PER_ID = 14;
/** Random bytes drawn 256 ids at a time: one call into the CSPRNG per 256 ids, not per id. */
const pool = Buffer.alloc(RANDOM_PER_ID * 256);
let poolAt = pool.length;

export function newId(prefix: string): string {
  const time = Date.now().toString(36).padStart(9, '0');
  if (poolAt + RANDOM_PER_ID > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  let rand = '';
  for (let i = poolAt; i < poolAt + RANDOM_PER_ID; i++) rand += ALPHABET[(pool[i] as number) % 36];
  poolAt += RANDOM_PER_ID;
  return `${prefix}_${time}${rand}`;
}

/** A random token for secrets and links: url-safe base64 of `bytes` random bytes. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
