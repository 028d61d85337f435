/**
 * The `torii-gateway/drivers/redis` entry: state shared by several processes and instances through Redis over TCP
 * (ioredis), as `node dist/server.js` uses it with `REDIS_URL`: the key cache, rate limits (Lua scripts), key
 * invalidations and circuit changes (pub/sub). Pass the cache and limit store to `openDatabaseAccounting` or
 * `assembleAccounting` (`torii-gateway/accounting`), the invalidation bus likewise, and the circuit bus to
 * `createGateway`'s `routing.circuitBus`. Needs `ioredis`.
 *
 * @example
 * import { createRedisKeyValueCache, createRedisLimitStore, openRedisConnection } from 'torii-gateway/drivers/redis';
 * const redis = openRedisConnection(process.env.REDIS_URL!, { logger: console });
 * const sharedCache = createRedisKeyValueCache(redis, { prefix: 'torii:kv:' });
 * const limitStore = createRedisLimitStore({ redis });
 */
export {
  openRedisConnection,
  openRedisSubscriberConnection,
  whenRedisReady,
  type RedisConnectionOptions,
} from '../node/redis-connection.ts';
export { createRedisKeyValueCache, type RedisKeyValueCacheOptions } from '../node/redis-key-value-cache.ts';
export { createRedisLimitStore, type RedisLimitStoreOptions } from '../node/redis-limit-store.ts';
export {
  createRedisKeyInvalidationBus,
  type RedisKeyInvalidationBus,
  type RedisKeyInvalidationBusOptions,
} from '../node/redis-key-invalidation-bus.ts';
export { createRedisCircuitBus, type RedisCircuitBus } from '../node/circuit-buses.ts';
