import { assertTtlSeconds } from './key-value-cache-ttl.ts';
import type { KeyValueCache } from './key-value-cache.ts';
import { LruMap } from './lru-map.ts';

/** What {@link createMemoryKeyValueCache} is made with. */
export interface MemoryKeyValueCacheOptions {
  /** The most entries held; the least recently used one is evicted past it. */
  maxEntries: number;
  /** A monotonic clock in milliseconds (tests inject one); defaults to `performance.now()`. */
  now?: () => number;
}

/**
 * A {@link KeyValueCache} in this process's memory, over {@link LruMap}: the shared-cache tier when neither Redis nor
 * KV is configured. It is shared by nothing but this process (each Node cluster worker holds its own), so it only
 * saves database reads; it is not a place to keep counters other processes must see.
 *
 * `setIfAbsent` is atomic: JavaScript runs the check and the write without anything in between.
 *
 * @example
 * ```ts
 * const cache = createMemoryKeyValueCache({ maxEntries: 10_000 });
 * await cache.set('key:abc', JSON.stringify(record), { ttlSeconds: 60 });
 * ```
 */
export function createMemoryKeyValueCache(options: MemoryKeyValueCacheOptions): KeyValueCache {
  const entries = new LruMap<string>({ maxEntries: options.maxEntries, now: options.now });
  return {
    async get(key) {
      return entries.get(key);
    },
    async getMany(keys) {
      return keys.map((key) => entries.get(key));
    },
    async set(key, value, { ttlSeconds }) {
      assertTtlSeconds(ttlSeconds);
      entries.set(key, value, ttlSeconds * 1000);
    },
    async setIfAbsent(key, value, { ttlSeconds }) {
      assertTtlSeconds(ttlSeconds);
      if (entries.get(key) !== undefined) return false;
      entries.set(key, value, ttlSeconds * 1000);
      return true;
    },
    async delete(key) {
      entries.delete(key);
    },
  };
}
