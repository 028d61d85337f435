/**
 * The `torii-gateway/drivers/upstash` entry: state shared by several instances through Upstash Redis (Redis
 * over HTTPS, for runtimes without TCP sockets: Workers, Deno Deploy, and Node or Bun on serverless hosts). Pass the
 * cache and limit store to `openDatabaseAccounting` or `assembleAccounting`, and the circuit store to
 * `createPolledCircuitBus`. Needs `@upstash/redis`.
 */
export { createUpstashRedisClient, type UpstashConnectionOptions } from '../shared/upstash-redis-client.ts';
export { createUpstashKeyValueCache, type UpstashKeyValueCacheOptions } from '../shared/upstash-key-value-cache.ts';
export { createUpstashLimitStore, type UpstashLimitStoreOptions } from '../shared/upstash-limit-store.ts';
export { createUpstashCircuitStore } from '../shared/upstash-circuit-store.ts';
