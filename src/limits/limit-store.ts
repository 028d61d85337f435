/**
 * Shared counters for rate limits: the store that gives each process slices of a key's per-window quota
 * (Redis with an atomic Lua script on Node; a Durable Object on Workers; memory for tests and single-process use).
 * All implementations pass `tests/conformance/limit-store-suite.ts`.
 *
 * A counter is named by `counter` (e.g. `rpm:key_123`) within a fixed window that starts at `windowStart` (epoch
 * ms, a multiple of `windowMs`); the store forgets a window once it is over (at the latest `windowMs` plus a small
 * margin after it ended). Amounts are whole units (requests or tokens), never negative.
 */
export interface LimitStore {
  /**
   * Takes up to `amount` units from the counter's remaining quota (`limit` minus what the window has used) and
   * answers how many it granted. Grants nothing when fewer than `minimum` (default 1) units remain, so a caller that
   * needs a whole reservation can ask for it all-or-nothing (`minimum: amount`) or take what is left of a slice
   * (`minimum: 1`). Atomic: concurrent leases never grant more than `limit` in total within a window (units added
   * with {@link LimitStore.add} count as used, so a counter can stand above `limit`; it then grants nothing).
   *
   * Also answers `used`, the counter's total in the window after this lease, so callers can size their next slice
   * and report the remaining quota in `x-ratelimit-remaining-*` headers without a second call.
   */
  lease(request: {
    counter: string;
    windowStart: number;
    windowMs: number;
    amount: number;
    limit: number;
    minimum?: number;
  }): Promise<LimitLease>;
  /** Gives back units leased earlier and not used (never below zero; a window the store forgot stays forgotten). */
  release(request: { counter: string; windowStart: number; windowMs: number; amount: number }): Promise<void>;
  /** Adds units to the counter without checking the limit (settling real usage above the estimate). */
  add(request: { counter: string; windowStart: number; windowMs: number; amount: number }): Promise<void>;
}

/** What {@link LimitStore.lease} answers. */
export interface LimitLease {
  /** Units granted: 0, or between `minimum` and `amount`. */
  granted: number;
  /** The counter's total in the window after the grant (may exceed the limit after {@link LimitStore.add}). */
  used: number;
}
