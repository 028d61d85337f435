/**
 * What the rate limiter answers: an allowed {@link RateLimitReservation} or a {@link RateLimitRefusal}. Both carry
 * the numbers of OpenAI's `x-ratelimit-*` headers (see `rate-limit-headers.ts`).
 */

/** One counter's state in the current window, as the headers report it. */
export interface RateLimitWindowState {
  /** The key's limit per window. */
  limit: number;
  /**
   * Units left in the window. Exact in `strict` and `local` mode; in `leased` mode the store's remainder at this
   * process's last lease plus the units this process holds (slices other processes hold count as used).
   */
  remaining: number;
  /** When the window ends and the counter starts again from zero (epoch ms). */
  resetAt: number;
}

/** An admitted request: pass it to `settle` with the real usage, or to `release` when the upstream was never used. */
export interface RateLimitReservation {
  readonly allowed: true;
  readonly keyId: string;
  /** The tokens reserved (the estimate, rounded up to a whole number). */
  readonly estimatedTokens: number;
  /** Start of the window the reservation was taken in (epoch ms); settling corrects that window. */
  readonly windowStart: number;
  /** Requests per window after this one; undefined when the key has no RPM limit. */
  readonly requests: RateLimitWindowState | undefined;
  /** Tokens per window after this reservation; undefined when the key has no TPM limit. */
  readonly tokens: RateLimitWindowState | undefined;
}

/** A refused request: answer it with `rateLimitError(refusal)` (a 429). */
export interface RateLimitRefusal {
  readonly allowed: false;
  readonly keyId: string;
  /** Which limit refused it (the requests limit is checked first). */
  readonly limited: 'rpm' | 'tpm';
  /** Seconds until the window ends (at least 1): the `retry-after` header. */
  readonly retryAfterSeconds: number;
  /** The refusing counter's limit, remaining units and window end (epoch ms). */
  readonly limit: number;
  readonly remaining: number;
  readonly resetAt: number;
  /** Units the request asked for: 1 for RPM, the token estimate for TPM. */
  readonly requested: number;
  /**
   * True when the request asks for more than the whole limit (a token estimate above the TPM limit), so waiting
   * cannot help; the error message says to make the request smaller, as OpenAI's does.
   */
  readonly requestTooLarge: boolean;
  /** Both counters' states, for the `x-ratelimit-*` headers of the 429. */
  readonly requests: RateLimitWindowState | undefined;
  readonly tokens: RateLimitWindowState | undefined;
}

/** Either answer of `reserve`. */
export type RateLimitOutcome = RateLimitReservation | RateLimitRefusal;
