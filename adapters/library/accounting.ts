/**
 * The `torii-gateway/accounting` entry of the library, for Node, Deno and Bun (it opens Postgres connections and writes the
 * usage spill to local disk): what the `accounting` option of `createGateway` needs, built from a database URL.
 * `openDatabaseAccounting` does it all in one call (its `responseStore`, the Responses API's, is used by
 * `createGateway` unless `responses` says otherwise); the parts are here for assembling your own with
 * `assembleAccounting` (exported by `torii`) and `createDrizzleResponseStore` over a Drizzle database of your own.
 * Needs `drizzle-orm`, and `postgres` for a database URL (`@electric-sql/pglite` for the embedded PGlite); each is
 * loaded only when used. The Upstash stores for several instances are in `torii-gateway/upstash`.
 */
export {
  openDatabaseAccounting,
  type DatabaseAccounting,
  type DatabaseAccountingOptions,
} from '../shared/database-accounting.ts';
export { createDrizzleKeyStore } from '../../src/db/drizzle-key-store.ts';
export { createDrizzleUsageSink } from '../../src/db/drizzle-usage-sink.ts';
export { createDrizzleUsageQuery } from '../../src/db/drizzle-usage-query.ts';
export { createDrizzleResponseStore, type DrizzleResponseStoreOptions } from '../../src/db/drizzle-response-store.ts';
export { openFileUsageSpill, type FileUsageSpill, type FileUsageSpillOptions } from '../shared/usage-spill-files.ts';
