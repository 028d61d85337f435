import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import postgres from 'postgres';
import type { ToriiDatabase } from '../../src/db/database.ts';
import { migratePglite, migratePostgres } from './database-migrate.ts';
import { findMigrationsFolder } from './database-migrations-folder.ts';

/** An open database and how to close it. */
export interface OpenDatabase {
  db: ToriiDatabase;
  /** `postgres` (DATABASE_URL, postgres-js) or `pglite` (embedded, on local disk). */
  kind: 'postgres' | 'pglite';
  /** Closes the pool or the embedded database; waits for running queries (up to 5 s on Postgres). */
  close(): Promise<void>;
}

/** Options of {@link openDatabase}. */
export interface OpenDatabaseOptions {
  /** Apply pending migrations before returning (default true). */
  migrate?: boolean;
}

/** The default size of the postgres-js pool of one process. */
export const defaultPoolMax = 4;

function poolMax(environment: NodeJS.ProcessEnv): number {
  const value = environment.TORII_DATABASE_POOL_MAX;
  if (value === undefined || value === '') return defaultPoolMax;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) {
    throw new Error(`TORII_DATABASE_POOL_MAX must be a positive integer, got "${value}".`);
  }
  return parsed;
}

/**
 * Opens the gateway's database from the environment and applies pending migrations.
 *
 * - `DATABASE_URL` set: Postgres through postgres-js, a pool of `TORII_DATABASE_POOL_MAX` connections (default 4).
 *   Small on purpose: the database is off the request path (key cache misses, the admin API, one usage batch at a
 *   time per process), and every cluster worker and replica opens its own pool, so 4 per process keeps 8 cores x
 *   several replicas well under Postgres's default `max_connections` of 100 (LiteLLM's "too many clients" failure
 *   came from large per-process pools). Migrations are serialised across processes by an advisory lock.
 * - Otherwise: PGlite, Postgres compiled to WebAssembly running in this process, stored in `TORII_DATA_DIR`
 *   `<TORII_DATA_DIR>/pglite` (default `./.torii/pglite`; the data directory may hold other local state too, such
 *   as spilled usage). Only ONE process may open a PGlite directory; in a cluster, the primary owns it.
 *
 * @example
 * ```ts
 * const database = await openDatabase(process.env);
 * const keys = createDrizzleKeyStore(database.db);
 * // ... on shutdown, after the usage queue has flushed:
 * await database.close();
 * ```
 */
export async function openDatabase(
  environment: NodeJS.ProcessEnv,
  options: OpenDatabaseOptions = {},
): Promise<OpenDatabase> {
  const migrations = options.migrate === false ? undefined : findMigrationsFolder(environment);
  const url = environment.DATABASE_URL;
  if (url) {
    if (migrations) await migratePostgres(url, migrations);
    const client = postgres(url, {
      max: poolMax(environment),
      // Close idle connections so a quiet process gives its connections back.
      idle_timeout: 60,
      connect_timeout: 10,
      onnotice: () => {},
      connection: { application_name: 'torii' },
    });
    return {
      db: drizzlePostgres({ client }),
      kind: 'postgres',
      close: () => client.end({ timeout: 5 }),
    };
  }

  const directory = resolve(environment.TORII_DATA_DIR || './.torii', 'pglite');
  mkdirSync(directory, { recursive: true });
  const client = await PGlite.create(directory);
  try {
    if (migrations) await migratePglite(client, migrations);
  } catch (error) {
    await client.close();
    throw error;
  }
  return {
    db: drizzlePglite({ client }),
    kind: 'pglite',
    close: () => client.close(),
  };
}
