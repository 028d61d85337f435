import type { Redis } from 'ioredis';
import type { KeyValueCache } from '../../src/cache/key-value-cache.ts';
import { assertTtlSeconds } from '../../src/cache/key-value-cache-ttl.ts';

/** What {@link createRedisKeyValueCache} is made with. */
export interface RedisKeyValueCacheOptions {
  /** Put before every key (`torii:kv:`), so the cache can share a Redis database with other data. */
  prefix: string;
}

/**
 * A {@link KeyValueCache} in Redis through ioredis: `SET key value EX ttl`, `MGET` for `getMany`, and
 * `SET ... NX EX ttl` for `setIfAbsent`, which Redis runs atomically (exactly one of many concurrent callers stores
 * its value).
 *
 * Errors are not swallowed: with the options of {@link openRedisConnection} a call rejects promptly (at once while
 * disconnected, after the command timeout when Redis hangs), and the caller decides; the key lookup treats a
 * rejection as a miss and goes on to the next tier.
 *
 * @example
 * ```ts
 * const redis = openRedisConnection(process.env.REDIS_URL!, { logger });
 * const cache = createRedisKeyValueCache(redis, { prefix: 'torii:kv:' });
 * await cache.setIfAbsent(`key:${hash}`, JSON.stringify(record), { ttlSeconds: 300 });
 * ```
 */
export function createRedisKeyValueCache(redis: Redis, options: RedisKeyValueCacheOptions): KeyValueCache {
  const { prefix } = options;
  return {
    async get(key) {
      return (await redis.get(prefix + key)) ?? undefined;
    },
    async getMany(keys) {
      if (keys.length === 0) return [];
      const values = await redis.mget(keys.map((key) => prefix + key));
      return values.map((value) => value ?? undefined);
    },
    async set(key, value, { ttlSeconds }) {
      assertTtlSeconds(ttlSeconds);
      await redis.set(prefix + key, value, 'EX', ttlSeconds);
    },
    async setIfAbsent(key, value, { ttlSeconds }) {
      assertTtlSeconds(ttlSeconds);
      return (await redis.set(prefix + key, value, 'EX', ttlSeconds, 'NX')) === 'OK';
    },
    async delete(key) {
      await redis.del(prefix + key);
    },
  };
}
