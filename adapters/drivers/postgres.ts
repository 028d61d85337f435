/**
 * The `torii-gateway/drivers/postgres` entry: keys, the usage ledger and stored responses in Postgres through Drizzle:
 * `openPostgresDatabase` opens postgres-js at `DATABASE_URL` (or, without it, the embedded PGlite in `TORII_DATA_DIR`)
 * and applies pending migrations under an advisory lock; the stores work over its `db`. `torii-gateway/accounting`'s
 * `openDatabaseAccounting` assembles all of these; take them from here to wire your own. Needs `drizzle-orm`, and
 * `postgres` (or `@electric-sql/pglite`).
 *
 * @example
 * import { createDrizzleKeyStore, openPostgresDatabase } from 'torii-gateway/drivers/postgres';
 * const database = await openPostgresDatabase({ DATABASE_URL: process.env.DATABASE_URL });
 * const keyStore = createDrizzleKeyStore(database.db);
 */
export { openPostgresDatabase, type OpenPostgresDatabase } from '../shared/database-open.ts';
export { createDrizzleKeyStore } from '../../src/db/drizzle-key-store.ts';
export { createDrizzleUsageSink } from '../../src/db/drizzle-usage-sink.ts';
export { createDrizzleUsageQuery } from '../../src/db/drizzle-usage-query.ts';
export { createDrizzleResponseStore, type DrizzleResponseStoreOptions } from '../../src/db/drizzle-response-store.ts';
