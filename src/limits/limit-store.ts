/**
 * Shared counters for rate limits: the store that gives each process slices of a key's per-minute quota
 * (Redis with an atomic Lua script on Node; a Durable Object on Workers; memory when there is no shared store).
 * All implementations pass `tests/conformance/limit-store-suite.ts`.
 *
 * A counter is named by `counter` (e.g. `rpm:key_123`) within a fixed window that starts at `windowStart` (epoch
 * ms, a multiple of `windowMs`); the store forgets a window once it is over.
 */
export interface LimitStore {
  /**
   * Takes up to `amount` units from the counter's remaining quota `limit` in the window and answers how many it
   * granted (0 when the window is used up). Atomic: concurrent leases never grant more than `limit` in total.
   */
  lease(request: {
    counter: string;
    windowStart: number;
    windowMs: number;
    amount: number;
    limit: number;
  }): Promise<number>;
  /** Gives back units leased earlier and not used (never below zero). */
  release(request: { counter: string; windowStart: number; windowMs: number; amount: number }): Promise<void>;
  /** Adds units to the counter without checking the limit (settling real usage above the estimate). */
  add(request: { counter: string; windowStart: number; windowMs: number; amount: number }): Promise<void>;
}
