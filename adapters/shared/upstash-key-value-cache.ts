import type { Redis } from '@upstash/redis';
import type { KeyValueCache } from '../../src/cache/key-value-cache.ts';
import { assertTtlSeconds } from '../../src/cache/key-value-cache-ttl.ts';
import { createUpstashRedisClient, type UpstashConnectionOptions } from './upstash-redis-client.ts';

/**
 * What {@link createUpstashKeyValueCache} is made with: where the database is (a client is then built with
 * {@link createUpstashRedisClient}), or a client built that way already (to share it with the limit store).
 */
export type UpstashKeyValueCacheOptions = (UpstashConnectionOptions | { redis: Redis }) & {
  /** Put before every key (`torii:kv:`), so the cache can share the database with other data. */
  prefix: string;
};

/**
 * A {@link KeyValueCache} in Upstash Redis over its REST API (`@upstash/redis`), for runtimes without TCP sockets:
 * Workers, Deno Deploy, and Node too. `SET key value EX ttl`, `MGET` for `getMany`, and `SET ... NX EX ttl` for
 * `setIfAbsent`, which Redis runs atomically. The client's settings (no automatic deserialization, one quick retry, a
 * timeout per call) are explained at {@link createUpstashRedisClient}; pass a client of your own only if it was built
 * that way.
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
  const redis = 'redis' in options ? options.redis : createUpstashRedisClient(options);
  const { prefix } = options;
  return {
    async get(key) {
      return (await redis.get<string>(prefix + key)) ?? undefined;
    },
    async getMany(keys) {
      if (keys.length === 0) return [];
      const values = await redis.mget<(string | null)[]>(...keys.map((key) => prefix + key));
      return values.map((value) => value ?? undefined);
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
