import { GatewayError } from '../errors.ts';
import { rateLimitHeaders } from './rate-limit-headers.ts';
import type { RateLimitRefusal } from './rate-limit-outcome.ts';
import { formatResetDuration } from './window-clock.ts';

const counterNames = {
  rpm: { type: 'requests', text: 'requests per min (RPM)' },
  tpm: { type: 'tokens', text: 'tokens per min (TPM)' },
} as const;

/**
 * The 429 for a refused request, shaped as OpenAI's own:
 *
 * ```json
 * {"error":{"message":"Rate limit reached for key key_1 on requests per min (RPM): Limit 3, Used 3, Requested 1.
 *  Please try again in 20s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}
 * ```
 *
 * with `retry-after` (whole seconds until the window ends) and the `x-ratelimit-*` headers. The error `type` is
 * OpenAI's `requests` or `tokens` (the Anthropic rendering maps by status and answers `rate_limit_error`). A request whose token estimate exceeds the
 * whole TPM limit gets OpenAI's "Request too large" wording, since waiting cannot help it. Not retryable: the
 * gateway must not retry a limit it imposes itself.
 *
 * @example
 * ```ts
 * const outcome = await limiter.reserve({ keyId, rpmLimit, tpmLimit, estimatedTokens });
 * if (!outcome.allowed) throw rateLimitError(outcome);
 * ```
 */
export function rateLimitError(refusal: RateLimitRefusal, now: number = Date.now()): GatewayError {
  const counter = counterNames[refusal.limited];
  const used = Math.max(0, refusal.limit - refusal.remaining);
  const waitText = formatResetDuration(refusal.resetAt - now);
  const message = refusal.requestTooLarge
    ? `Request too large for key ${refusal.keyId} on ${counter.text}: Limit ${refusal.limit}, Requested ` +
      `${refusal.requested}. The input or output tokens must be reduced in order to run successfully.`
    : `Rate limit reached for key ${refusal.keyId} on ${counter.text}: Limit ${refusal.limit}, Used ${used}, ` +
      `Requested ${refusal.requested}. Please try again in ${waitText}.`;
  return new GatewayError({
    status: 429,
    type: counter.type,
    code: 'rate_limit_exceeded',
    message,
    retryable: false,
    headers: { 'retry-after': String(refusal.retryAfterSeconds), ...rateLimitHeaders(refusal, now) },
  });
}
