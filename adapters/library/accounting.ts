/**
 * The `torii-gateway/accounting` entry of the library, for Node, Deno and Bun (it opens Postgres connections and writes the
 * usage spill to local disk): what the `accounting` option of `createGateway` needs, built from a database URL.
 * `openDatabaseAccounting` does it all in one call (its `responseStore`, the Responses API's, is used by
 * `createGateway` unless `responses` says otherwise); the parts are here for assembling your own with
 * `assembleAccounting` (exported by `torii`) and `createDrizzleResponseStore` over a Drizzle database of your own.
 */
export {
  openDatabaseAccounting,
  type DatabaseAccounting,
  type DatabaseAccountingOptions,
} from '../shared/database-accounting.ts';
export { createUpstashRedisClient, type UpstashConnectionOptions } from '../shared/upstash-redis-client.ts';
export { createUpstashKeyValueCache, type UpstashKeyValueCacheOptions } from '../shared/upstash-key-value-cache.ts';
export { createUpstashLimitStore, type UpstashLimitStoreOptions } from '../shared/upstash-limit-store.ts';
export { createUpstashCircuitStore } from '../shared/upstash-circuit-store.ts';
export { createDrizzleKeyStore } from '../../src/db/drizzle-key-store.ts';
export { createDrizzleUsageSink } from '../../src/db/drizzle-usage-sink.ts';
export { createDrizzleUsageQuery } from '../../src/db/drizzle-usage-query.ts';
export { createDrizzleResponseStore, type DrizzleResponseStoreOptions } from '../../src/db/drizzle-response-store.ts';
export { openFileUsageSpill, type FileUsageSpill, type FileUsageSpillOptions } from '../shared/usage-spill-files.ts';
