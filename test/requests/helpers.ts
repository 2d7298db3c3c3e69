import type { Challenge } from 'altcha-lib';
import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import type { Harness } from '../harness.js';

let address = 0;
/** A fresh client address, so each test has its own per-address budget. */
export const nextAddress = () => `10.45.${Math.floor(++address / 250)}.${(address % 250) + 1}`;

/** Solves a challenge as the widget does (altcha-lib's solver) and returns the `altcha` field. */
export async function solve(challenge: Challenge): Promise<string> {
  const solution = await solveChallenge({ challenge, deriveKey });
  if (!solution) throw new Error('challenge not solved');
  return Buffer.from(JSON.stringify({ challenge, solution })).toString('base64');
}

/** A challenge from the public route, solved. */
export async function solvedField(h: Harness, slug: string, remoteAddress = nextAddress()): Promise<string> {
  const res = await h.app.inject({ method: 'GET', url: `/api/public/${slug}/challenge`, remoteAddress });
  if (res.statusCode !== 200) throw new Error(`challenge: ${res.statusCode} ${res.body}`);
  return solve(res.json() as Challenge);
}

export function postRequest(h: Harness, slug: string, body: unknown, remoteAddress = nextAddress()) {
  return h.app.inject({
    method: 'POST',
    url: `/api/public/${slug}/requests`,
    payload: body as object,
    remoteAddress,
  });
}
