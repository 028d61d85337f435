import type { Redis } from 'ioredis';
import type { LimitStore } from '../../src/limits/limit-store.ts';
import { createScriptedLimitStore } from '../shared/redis-limit-scripts.ts';

/** What {@link createRedisLimitStore} needs. */
export interface RedisLimitStoreOptions {
  /** A connected ioredis client (a `Cluster` works too: every script touches one key). Not closed by the store. */
  redis: Pick<Redis, 'evalsha' | 'eval'>;
  /** Prefix of every key the store writes. Defaults to `torii:limit:`. */
  keyPrefix?: string;
}

/**
 * A {@link LimitStore} over Redis (ioredis): each operation is one atomic Lua script on one key,
 * `<prefix><counter>:<windowStart>:<windowMs>`, which expires two window lengths after it was created. The scripts
 * are shared with the Upstash store (adapters/shared/redis-limit-scripts.ts); they run by EVALSHA, falling back to
 * EVAL when the server does not know them yet.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * const store = createRedisLimitStore({ redis: new Redis(process.env.REDIS_URL!) });
 * const limiter = createRateLimiter({ mode: 'leased', store });
 * ```
 */
export function createRedisLimitStore(options: RedisLimitStoreOptions): LimitStore {
  const { redis } = options;
  return createScriptedLimitStore({
    keyPrefix: options.keyPrefix ?? 'torii:limit:',
    runner: {
      evalsha: (sha1, key, args) => redis.evalsha(sha1, 1, key, ...args),
      eval: (source, key, args) => redis.eval(source, 1, key, ...args),
    },
  });
}
