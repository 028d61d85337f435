/**
 * A shared string cache with per-entry TTL: the middle tier of the key lookup (between the in-process LRU and
 * Postgres) and the home of budget counters. Implementations: in-process memory, Redis (ioredis, Node), Upstash
 * REST (any fetch runtime), Workers KV. All pass `tests/conformance/key-value-cache-suite.ts`.
 *
 * Values are opaque strings (callers store JSON). A TTL is a whole number of seconds, at least 1 (Workers KV
 * requires 60 or more and implementations round up what the store cannot honour exactly).
 */
export interface KeyValueCache {
  /** The value, or undefined when absent or expired. */
  get(key: string): Promise<string | undefined>;
  /**
   * The values of many keys in one round trip (Redis `MGET`), in the order asked, undefined for each absent or
   * expired one. Optional: stores without a multi-get (Workers KV) leave it out and callers fall back to {@link get}.
   * Callers keep a call to a few hundred keys.
   */
  getMany?(keys: readonly string[]): Promise<(string | undefined)[]>;
  /** Stores the value, replacing any current one. */
  set(key: string, value: string, options: { ttlSeconds: number }): Promise<void>;
  /**
   * Stores the value only when the key holds none; answers whether it stored it. Readers that fill the cache
   * from the database use it, so they never overwrite a newer record an administrator has just written.
   * Stores without an atomic form (Workers KV) may implement it as get-then-set and say so.
   */
  setIfAbsent(key: string, value: string, options: { ttlSeconds: number }): Promise<boolean>;
  delete(key: string): Promise<void>;
}
