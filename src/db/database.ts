import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';

/**
 * A Drizzle database over any Postgres driver: postgres-js or PGlite on Node, node-postgres through Hyperdrive on
 * Workers. The stores in this folder take this type, so they never know which driver is underneath.
 */
export type ToriiDatabase = PgDatabase<PgQueryResultHKT>;
