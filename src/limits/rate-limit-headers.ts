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
  const headers: Record<string, string> = {};
  const put = (suffix: 'requests' | 'tokens', state: RateLimitWindowState | undefined): void => {
    if (state === undefined) return;
    headers[`x-ratelimit-limit-${suffix}`] = String(state.limit);
    headers[`x-ratelimit-remaining-${suffix}`] = String(state.remaining);
    headers[`x-ratelimit-reset-${suffix}`] = formatResetDuration(state.resetAt - now);
  };
  put('requests', outcome.requests);
  put('tokens', outcome.tokens);
  return headers;
}
