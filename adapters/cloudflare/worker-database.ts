import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import type { ToriiDatabase } from '../../src/db/database.ts';
import type { GatewayLogger } from '../../src/services.ts';
import { describeErrorSafely } from '../../src/security/safe-error-description.ts';
import { migrateWorkerDatabase, type BundledMigration } from './worker-database-migrate.ts';

/** Postgres as a Worker reaches it: one connection per use, the migrations applied before the isolate's first use. */
export interface WorkerDatabase {
  /**
   * Runs `work` on a connection of its own, opened for it and ended after it (the end is handed to the invocation's
   * `waitUntil` by `keepAlive`, so it costs the caller no time). The first use in an isolate applies pending
   * migrations first; later uses wait for that, then run at once.
   */
  use<Result>(work: (db: ToriiDatabase) => Promise<Result>): Promise<Result>;
}

/** What {@link createWorkerDatabase} is made with. */
export interface WorkerDatabaseOptions {
  /** The migrations to apply before the first use (worker-migrations-bundled.ts). */
  migrations: readonly BundledMigration[];
  /** Keeps background work (a connection closing) alive after the response; see worker-request-scope.ts. */
  keepAlive: (work: Promise<unknown>) => void;
  logger: GatewayLogger;
}

/**
 * Postgres for a Worker, through postgres-js (its `workerd` build, over `cloudflare:sockets`) and Drizzle, from a
 * Hyperdrive binding's connection string or `DATABASE_URL`.
 *
 * Why a connection per use: workerd forbids using an I/O object (a socket) in a request other than the one that
 * opened it, so a pool kept in the isolate would break as soon as a second request used it. Hyperdrive makes that
 * cheap: the Worker's connection goes to Hyperdrive in the same location, which keeps the real connections to the
 * database warm and pooled. Without Hyperdrive each use pays a full TCP, TLS and authentication handshake with the
 * database, which is only acceptable because the database is off the request path (key cache misses, the admin API,
 * budget reconciliation, the queue consumer).
 *
 * Each connection is postgres-js with `max: 1` (one socket, opened at the first query) and `fetch_types: false` (no
 * extra round trip to read array types at connect: Drizzle parses the one array column itself).
 *
 * @example
 * ```ts
 * const options = { migrations: bundledMigrations, keepAlive, logger };
 * const database = createWorkerDatabase(env.HYPERDRIVE.connectionString, options);
 * const key = await database.use((db) => createDrizzleKeyStore(db).findById('key_1'));
 * ```
 */
export function createWorkerDatabase(connectionString: string, options: WorkerDatabaseOptions): WorkerDatabase {
  const { migrations, keepAlive, logger } = options;
  let migrated: Promise<void> | undefined;

  const migrateOnce = (db: ToriiDatabase): Promise<void> => {
    migrated ??= migrateWorkerDatabase(db, migrations).then(
      ({ applied }) => {
        if (applied.length > 0) logger.info('database migrated', { applied });
      },
      (error: unknown) => {
        // The next use tries again.
        migrated = undefined;
        logger.error('database migration failed', { error: describeErrorSafely(error) });
        throw error;
      },
    );
    return migrated;
  };

  return {
    use(work) {
      const client = postgres(connectionString, {
        max: 1,
        fetch_types: false,
        connect_timeout: 10,
        onnotice: () => {},
        connection: { application_name: 'torii-worker' },
      });
      const db: ToriiDatabase = drizzle({ client });
      const run = (async () => {
        try {
          await migrateOnce(db);
          return await work(db);
        } finally {
          keepAlive(client.end({ timeout: 5 }));
        }
      })();
      // Finish the work even if the request that started it ends first: another request may share its result
      // (the key lookup is single-flight), and the ledger consumer must not leave a statement half done.
      keepAlive(run);
      return run;
    },
  };
}
