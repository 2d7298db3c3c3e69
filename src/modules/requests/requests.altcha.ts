import { createHmac } from 'node:crypto';
import type { Challenge, Solution } from 'altcha-lib';
import { createChallenge, randomInt, verifySolution } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { and, eq, lt } from 'drizzle-orm';
import { altchaSpent } from '../../db/schema/index.js';
import { invalidField } from '../../platform/errors.js';
import type { Ctx } from '../../platform/tenancy.js';

/*
 * The booking form's spam check: an ALTCHA proof-of-work (altcha-lib, verified here; nothing
 * leaves the machine). The browser finds the counter whose SHA-256 starts with the signed key
 * prefix; we check the signature and the key without redoing the work. The HMAC secrets are
 * derived from AUTH_SECRET and the organization, so a challenge of one organization is refused
 * by another, and a challenge lives ten minutes. Each solution is spent once: its challenge's
 * signature goes into `altcha_spent` (a key every process shares) in the request's transaction.
 */

export const CHALLENGE_TTL_SECONDS = 600;
/** Work for a browser: on average half of this many SHA-256 rounds (well under a second on a phone). */
const COUNTER_MIN = 5_000;
const COUNTER_MAX = 50_000;
const ALGORITHM = 'SHA-256';

function secretsOf(authSecret: string, organizationId: string) {
  const derive = (label: string) =>
    createHmac('sha256', authSecret).update(`altcha:${label}:${organizationId}`).digest('hex');
  return { hmacSignatureSecret: derive('challenge'), hmacKeySignatureSecret: derive('key') };
}

/** A new challenge for the organization's form (GET /api/public/{slug}/challenge). */
export async function newChallenge(authSecret: string, organizationId: string, now = Date.now()): Promise<Challenge> {
  return createChallenge({
    algorithm: ALGORITHM,
    cost: 1,
    counter: randomInt(COUNTER_MIN, COUNTER_MAX),
    deriveKey,
    expiresAt: Math.floor(now / 1000) + CHALLENGE_TTL_SECONDS,
    ...secretsOf(authSecret, organizationId),
  });
}

interface Payload {
  challenge: Challenge;
  solution: Solution;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The widget's field: base64 of `{challenge, solution}`; anything else is undefined. */
function decode(field: string): Payload | undefined {
  if (!/^[A-Za-z0-9+/=_-]+$/.test(field)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(field, 'base64').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isObject(parsed) || !isObject(parsed.challenge) || !isObject(parsed.solution)) return undefined;
  const { challenge, solution } = parsed;
  if (!isObject(challenge.parameters) || typeof challenge.signature !== 'string') return undefined;
  const p = challenge.parameters;
  // Only the challenges this service makes: the key function must not be handed another algorithm or cost.
  if (p.algorithm !== ALGORITHM || p.cost !== 1 || typeof p.nonce !== 'string' || typeof p.salt !== 'string') {
    return undefined;
  }
  if (typeof p.keyPrefix !== 'string' || typeof p.expiresAt !== 'number') return undefined;
  if (!Number.isSafeInteger(solution.counter) || typeof solution.derivedKey !== 'string') return undefined;
  return parsed as unknown as Payload;
}

const refused = (why: string) => invalidField('altcha', why);

/**
 * Checks the form's `altcha` field and spends it in the caller's transaction: missing, forged,
 * for another organization, expired or already used → 400 on `altcha`.
 */
export async function spendSolution(ctx: Ctx, authSecret: string, field: string): Promise<void> {
  const payload = decode(field);
  if (!payload) throw refused('is not an ALTCHA payload; solve the challenge of GET /api/public/{slug}/challenge');
  let result: Awaited<ReturnType<typeof verifySolution>>;
  try {
    result = await verifySolution({
      challenge: payload.challenge,
      solution: payload.solution,
      deriveKey,
      ...secretsOf(authSecret, ctx.organizationId),
    });
  } catch {
    throw refused('is not a valid solution');
  }
  if (result.expired) throw refused('the challenge expired; ask for a new one');
  if (!result.verified) throw refused('is not a valid solution');
  const expiresAt = new Date((payload.challenge.parameters.expiresAt as number) * 1000);
  const now = new Date();
  // Spent solutions are kept only until their challenge expires (then they are refused as expired anyway).
  await ctx.tx
    .delete(altchaSpent)
    .where(and(eq(altchaSpent.organizationId, ctx.organizationId), lt(altchaSpent.expiresAt, now)));
  const spent = await ctx.tx
    .insert(altchaSpent)
    .values({ organizationId: ctx.organizationId, challengeKey: payload.challenge.signature as string, expiresAt })
    .onConflictDoNothing()
    .returning({ key: altchaSpent.challengeKey });
  if (spent.length === 0) throw refused('was already used; solve a new challenge');
}
