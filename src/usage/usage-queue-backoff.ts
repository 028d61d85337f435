/** Exponential backoff between retries of a failed write. */
export interface RetryBackoff {
  /** Delay before the first retry, in ms. */
  baseMs: number;
  /** Longest delay, in ms. */
  capMs: number;
  /**
   * Fraction of the delay taken off at random, from 0 (none) to 1 (anywhere between 0 and the delay), so processes
   * that failed together do not retry together.
   */
  jitter: number;
}

/**
 * The defaults: 200 ms, doubling up to 5 s, up to 20% shorter at random. The cap bounds how long the ledger (and the
 * budget reconciliation that reads it) lags after the database comes back; one failed attempt per 5 s per writer is
 * no load on a database that is down.
 */
export const defaultRetryBackoff: RetryBackoff = { baseMs: 200, capMs: 5_000, jitter: 0.2 };

/**
 * The delay before retry number `attempt` (1 for the first retry): `min(capMs, baseMs * 2^(attempt - 1))`, shortened
 * by up to `jitter` of itself. `random` returns a number in [0, 1).
 */
export function retryDelayMs(attempt: number, backoff: RetryBackoff, random: () => number): number {
  const exponent = Math.min(Math.max(attempt, 1) - 1, 52);
  const delay = Math.min(backoff.capMs, backoff.baseMs * 2 ** exponent);
  const jitter = Math.min(Math.max(backoff.jitter, 0), 1);
  return Math.round(delay * (1 - jitter * random()));
}
