import { Redis } from '@upstash/redis';
import type { KeyValueCache } from '../../src/cache/key-value-cache.ts';
import { assertTtlSeconds } from '../../src/cache/key-value-cache-ttl.ts';

/** What {@link createUpstashKeyValueCache} is made with. */
export interface UpstashKeyValueCacheOptions {
  /** The database's REST URL (`UPSTASH_REDIS_REST_URL`). */
  url: string;
  /** The database's REST token (`UPSTASH_REDIS_REST_TOKEN`). */
  token: string;
  /** Put before every key (`torii:kv:`), so the cache can share the database with other data. */
  prefix: string;
  /** How long one HTTP call may take before it is aborted and the call rejects, in ms. Default 2000. */
  timeoutMs?: number;
  /** How many times a call that failed at the network level is tried again (50 ms apart). Default 1. */
  retries?: number;
}

/**
 * A {@link KeyValueCache} in Upstash Redis over its REST API (`@upstash/redis`), for runtimes without TCP sockets:
 * Workers, Deno Deploy, and Node too. `SET key value EX ttl`, and `SET ... NX EX ttl` for `setIfAbsent`, which Redis
 * runs atomically.
 *
 * The client is built here rather than passed in, because three of its defaults are wrong for a cache of opaque
 * strings on a request path:
 *
 * - `automaticDeserialization` would `JSON.parse` every value read: `"123"` would come back as the number 123 and
 *   `'{"a": 1}'` as an object. It is turned off, so values come back exactly as stored.
 * - Retries: by default five, backing off up to ~4 s in total, on a request path. Here one retry 50 ms later.
 * - No timeout: a call waits as long as fetch does. Here each HTTP call is aborted after `timeoutMs`.
 *
 * Responses come base64-encoded (the client's default `Upstash-Encoding: base64`), so any byte sequence survives
 * JSON; commands issued in the same tick are batched into one `/pipeline` call (auto-pipelining, on by default).
 *
 * @example
 * ```ts
 * const cache = createUpstashKeyValueCache({
 *   url: env.UPSTASH_REDIS_REST_URL,
 *   token: env.UPSTASH_REDIS_REST_TOKEN,
 *   prefix: 'torii:kv:',
 * });
 * await cache.setIfAbsent(`key:${hash}`, JSON.stringify(record), { ttlSeconds: 300 });
 * ```
 */
export function createUpstashKeyValueCache(options: UpstashKeyValueCacheOptions): KeyValueCache {
  const timeoutMs = options.timeoutMs ?? 2_000;
  const redis = new Redis({
    url: options.url,
    token: options.token,
    automaticDeserialization: false,
    enableTelemetry: false,
    retry: { retries: options.retries ?? 1, backoff: () => 50 },
    // A function, so each call gets a fresh timeout, and an abort rejects the call (a plain signal that has fired
    // makes the client resolve with the abort reason as if it were the result).
    signal: () => AbortSignal.timeout(timeoutMs),
  });
  const { prefix } = options;
  return {
    async get(key) {
      return (await redis.get<string>(prefix + key)) ?? undefined;
    },
    async set(key, value, { ttlSeconds }) {
      assertTtlSeconds(ttlSeconds);
      await redis.set(prefix + key, value, { ex: ttlSeconds });
    },
    async setIfAbsent(key, value, { ttlSeconds }) {
      assertTtlSeconds(ttlSeconds);
      return (await redis.set(prefix + key, value, { ex: ttlSeconds, nx: true })) === 'OK';
    },
    async delete(key) {
      await redis.del(prefix + key);
    },
  };
}
