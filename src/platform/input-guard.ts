import type { FastifyInstance } from 'fastify';
import { AppError } from './errors.js';

/**
 * Input rules that hold for every route, checked once before any handler (README, Conventions):
 * - no string anywhere in the body, path parameters or query (keys included) contains NUL:
 *   PostgreSQL cannot store it in text and would answer with a driver error;
 * - JSON bodies nest at most MAX_JSON_DEPTH levels, checked on the raw text before JSON.parse,
 *   so no recursive code (Better Auth's, JSON.stringify, validators) ever sees a deeper value.
 * Numeric bounds live in the schemas and in platform/validation.ts (coercion never yields ±Infinity).
 */
export const MAX_JSON_DEPTH = 64;

/** True when the JSON text opens more than `max` nested arrays/objects; one pass, no recursion. */
export function jsonTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

/**
 * The path (`a.b.0.c`) of the first string or key that contains NUL, or undefined. Iterative:
 * bodies are already depth-limited, but query strings and params need no recursion either.
 */
export function findNul(value: unknown, root = ''): string | undefined {
  const stack: Array<[unknown, string]> = [[value, root]];
  while (stack.length > 0) {
    const [current, path] = stack.pop() as [unknown, string];
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return path;
    } else if (current !== null && typeof current === 'object') {
      for (const [key, child] of Object.entries(current)) {
        const childPath = path ? `${path}.${key}` : key;
        if (key.includes('\u0000')) return childPath.replaceAll('\u0000', '\\0');
        stack.push([child, childPath]);
      }
    }
  }
  return undefined;
}

const nulError = (field: string) =>
  new AppError('VALIDATION_FAILED', `${field} must not contain a NUL character`, {
    details: [{ field, message: 'must not contain a NUL character' }],
  });

/** Refuses NUL in params, query and body for every route, before validation and handlers. */
export function installInputGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    // A body that is itself a NUL-bearing string has the empty path ('' survives `??`).
    const field = findNul(request.params) ?? findNul(request.query) ?? findNul(request.body);
    if (field !== undefined) throw nulError(field || '(body)');
  });
}
