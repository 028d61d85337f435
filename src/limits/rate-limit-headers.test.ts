import { describe, expect, it } from 'vitest';
import type { RateLimitOutcome } from './rate-limit-outcome.ts';
import { rateLimitHeaders } from './rate-limit-headers.ts';

const now = 1_700_000_000_000;
const reservation = (
  requests: { limit: number; remaining: number; resetAt: number } | undefined,
  tokens: { limit: number; remaining: number; resetAt: number } | undefined,
): RateLimitOutcome => ({ allowed: true, keyId: 'key_a', estimatedTokens: 10, windowStart: now, requests, tokens });

describe('rateLimitHeaders', () => {
  it('names both counters, each with its own reset', () => {
    expect(
      rateLimitHeaders(
        reservation(
          { limit: 60, remaining: 59, resetAt: now + 1_500 },
          { limit: 150_000, remaining: 149_984, resetAt: now + 360_000 },
        ),
        now,
      ),
    ).toEqual({
      'x-ratelimit-limit-requests': '60',
      'x-ratelimit-remaining-requests': '59',
      'x-ratelimit-reset-requests': '1.5s',
      'x-ratelimit-limit-tokens': '150000',
      'x-ratelimit-remaining-tokens': '149984',
      'x-ratelimit-reset-tokens': '6m0s',
    });
  });

  it('names only the counter a key is limited by', () => {
    expect(rateLimitHeaders(reservation({ limit: 5, remaining: 0, resetAt: now + 17 }, undefined), now)).toEqual({
      'x-ratelimit-limit-requests': '5',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '17ms',
    });
    expect(rateLimitHeaders(reservation(undefined, { limit: 100, remaining: 40, resetAt: now - 5 }), now)).toEqual({
      'x-ratelimit-limit-tokens': '100',
      'x-ratelimit-remaining-tokens': '40',
      'x-ratelimit-reset-tokens': '0s',
    });
    expect(rateLimitHeaders(reservation(undefined, undefined), now)).toEqual({});
  });
});
