/**
 * Checks a `KeyValueCache` TTL: a whole number of seconds, at least 1. Every implementation calls it first,
 * so a caller's mistake (0, a fraction, milliseconds computed as NaN) fails the same way on every store instead of
 * meaning "no expiry" on one and an error on another.
 *
 * @example
 * ```ts
 * async set(key, value, { ttlSeconds }) {
 *   assertTtlSeconds(ttlSeconds);
 *   await store.put(key, value, ttlSeconds);
 * }
 * ```
 */
export function assertTtlSeconds(ttlSeconds: number): void {
  if (!Number.isSafeInteger(ttlSeconds) || ttlSeconds < 1)
    throw new RangeError(`ttlSeconds must be a whole number of seconds from 1, got ${ttlSeconds}.`);
}
