import { describe, expect, it } from 'vitest';
import { parseRetryAfter, RETRY_AFTER_MAX_MS, RETRY_AFTER_MIN_MS } from './delivery.js';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');
  it('reads delay-seconds and HTTP dates', () => {
    expect(parseRetryAfter('30', now)).toBe(30_000);
    expect(parseRetryAfter('Sun, 01 Mar 2026 12:02:00 GMT', now)).toBe(120_000);
  });
  it('clamps to 1 s .. 1 h so a receiver can neither spin the worker nor park an endpoint for days', () => {
    expect(parseRetryAfter('0', now)).toBe(RETRY_AFTER_MIN_MS);
    expect(parseRetryAfter('Sun, 01 Mar 2026 11:00:00 GMT', now)).toBe(RETRY_AFTER_MIN_MS);
    expect(parseRetryAfter('999999', now)).toBe(RETRY_AFTER_MAX_MS);
  });
  it('ignores what it cannot read', () => {
    expect(parseRetryAfter(undefined, now)).toBeNull();
    expect(parseRetryAfter('', now)).toBeNull();
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter('-5', now)).toBeNull();
  });
});
