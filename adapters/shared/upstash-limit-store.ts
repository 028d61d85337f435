import type { Redis } from '@upstash/redis';
import type { LimitStore } from '../../src/limits/limit-store.ts';
import { createScriptedLimitStore } from './redis-limit-scripts.ts';
import { createUpstashRedisClient, type UpstashConnectionOptions } from './upstash-redis-client.ts';

/** What {@link createUpstashLimitStore} is made with: where the database is, or a client built for it already. */
export type UpstashLimitStoreOptions = (UpstashConnectionOptions | { redis: Redis }) & {
  /** Prefix of every key the store writes. Defaults to `torii:limit:`. */
  keyPrefix?: string;
};

/**
 * A {@link LimitStore} in Upstash Redis over its REST API: the same atomic Lua scripts as the ioredis store
 * (adapters/shared/redis-limit-scripts.ts), sent as EVALSHA (EVAL when the server answers NOSCRIPT), one HTTP call
 * per operation (calls of one tick share a `/pipeline` request). For runtimes without TCP sockets (Deno Deploy,
 * Workers) and any other that prefers REST; the limiter's `leased` mode makes these calls rare (about one per slice).
 *
 * @example
 * ```ts
 * const store = createUpstashLimitStore({ url: env.UPSTASH_REDIS_REST_URL, token: env.UPSTASH_REDIS_REST_TOKEN });
 * const limiter = createRateLimiter({ mode: 'leased', store });
 * ```
 */
export function createUpstashLimitStore(options: UpstashLimitStoreOptions): LimitStore {
  const redis = 'redis' in options ? options.redis : createUpstashRedisClient(options);
  return createScriptedLimitStore({
    keyPrefix: options.keyPrefix ?? 'torii:limit:',
    runner: {
      evalsha: (sha1, key, args) => redis.evalsha(sha1, [key], args),
      eval: (source, key, args) => redis.eval(source, [key], args),
    },
  });
}
