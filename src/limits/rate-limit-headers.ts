import type { RateLimitOutcome, RateLimitWindowState } from './rate-limit-outcome.ts';
import { formatResetDuration } from './window-clock.ts';

/**
 * OpenAI's rate-limit headers for an outcome (allowed or refused), for each counter the key is limited by:
 *
 * ```
 * x-ratelimit-limit-requests: 60          x-ratelimit-limit-tokens: 150000
 * x-ratelimit-remaining-requests: 59      x-ratelimit-remaining-tokens: 149984
 * x-ratelimit-reset-requests: 1s          x-ratelimit-reset-tokens: 6m0s
 * ```
 *
 * The reset value is the time from `now` (epoch ms) until the counter is back at its full limit, which for a fixed
 * window is the window's end, in Go duration text as OpenAI sends it. A key with no limit on a counter gets no
 * headers for it. `retry-after` belongs to the 429 only and is added by `rateLimitError`.
 */
export function rateLimitHeaders(outcome: RateLimitOutcome, now: number): Record<string, string> {
  // Written out per counter (constant names, no closure): this runs on every response of a limited key.
  const headers: Record<string, string> = {};
  const requests: RateLimitWindowState | undefined = outcome.requests;
  if (requests !== undefined) {
    headers['x-ratelimit-limit-requests'] = String(requests.limit);
    headers['x-ratelimit-remaining-requests'] = String(requests.remaining);
    headers['x-ratelimit-reset-requests'] = formatResetDuration(requests.resetAt - now);
  }
  const tokens: RateLimitWindowState | undefined = outcome.tokens;
  if (tokens !== undefined) {
    headers['x-ratelimit-limit-tokens'] = String(tokens.limit);
    headers['x-ratelimit-remaining-tokens'] = String(tokens.remaining);
    headers['x-ratelimit-reset-tokens'] = formatResetDuration(tokens.resetAt - now);
  }
  return headers;
}
