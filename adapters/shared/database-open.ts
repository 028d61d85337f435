import type { PGlite } from '@electric-sql/pglite';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ToriiDatabase } from '../../src/db/database.ts';
import { loadPgliteDriver, loadPostgresDriver, migratePglite, migratePostgres } from './database-migrate.ts';
import { redactDatabaseError } from './database-errors.ts';
import { findMigrationsFolder, findSqliteMigrationsFolder } from './database-migrations-folder.ts';
import { openSqliteDatabase, type OpenSqliteDatabase } from './sqlite-database-open.ts';
import type { SqliteExecutorFactory } from './sqlite-executor.ts';
import { openSqliteWorkerThreadExecutor } from './sqlite-worker-thread.ts';
import { readDatabaseSetting } from './database-setting.ts';
import { fileSystemReason, StartupError, systemErrorCode } from './startup-error.ts';

/** An open Postgres database (postgres-js or PGlite) and how to close it. */
export interface OpenPostgresDatabase {
  db: ToriiDatabase;
  /** `postgres` (DATABASE_URL, postgres-js) or `pglite` (embedded, on local disk). */
  kind: 'postgres' | 'pglite';
  /** Closes the pool or the embedded database; waits for running queries (up to 5 s on Postgres). */
  close(): Promise<void>;
}

/**
 * An open database and how to close it: Postgres (`postgres`, `pglite`, a {@link ToriiDatabase}) or the embedded
 * SQLite (`sqlite`, a `ToriiSqliteDatabase`); `kind` tells which stores fit its `db`.
 */
export type OpenDatabase = OpenPostgresDatabase | OpenSqliteDatabase;

/** Options of {@link openDatabase}. */
export interface OpenDatabaseOptions {
  /** Apply pending migrations before returning (default true). */
  migrate?: boolean;
  /**
   * Where the embedded SQLite database runs its statements. Default: a worker thread of its own
   * (`openSqliteWorkerThreadExecutor()`, Node and Deno), so the synchronous `node:sqlite` never runs on the thread
   * that serves requests; tests may pass `openInlineSqliteExecutor`.
   */
  sqliteExecutor?: SqliteExecutorFactory;
}

/** The default size of the postgres-js pool of one process. */
export const defaultPoolMax = 4;

function poolMax(environment: NodeJS.ProcessEnv): number {
  const value = environment.TORII_DATABASE_POOL_MAX;
  if (value === undefined || value === '') return defaultPoolMax;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) {
    throw new StartupError('TORII_DATABASE_POOL_MAX', `must be a positive integer, got "${value}"`);
  }
  return parsed;
}

/**
 * Checks that DATABASE_URL is a Postgres URL (postgres-js would take `mysql://...` and try to speak Postgres to it),
 * and returns where it points without its credentials, for messages.
 */
function checkDatabaseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // The value may hold a password: never echo it.
    throw new StartupError('DATABASE_URL', 'is not a valid URL (expected postgres://user:password@host:5432/database)');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new StartupError(
      'DATABASE_URL',
      `must be a postgres:// or postgresql:// URL, got a ${parsed.protocol}// URL (torii stores keys and usage in PostgreSQL)`,
    );
  }
  return `${parsed.host}${parsed.pathname}`;
}

/** Errno values of PGlite's file system (Emscripten's numbering), for start-up messages. */
const pgliteErrno: Record<number, string> = {
  2: 'permission denied (EACCES)',
  44: 'no such file or directory (ENOENT)',
  51: 'no space left on the device (ENOSPC)',
  54: 'a part of the path is not a directory (ENOTDIR)',
  63: 'operation not permitted (EPERM)',
  69: 'read-only file system (EROFS)',
};

function pgliteFailure(directory: string, what: string, error: unknown): StartupError {
  const errno = (error as { errno?: unknown } | null)?.errno;
  const reason =
    typeof errno === 'number'
      ? (pgliteErrno[errno] ?? `file system error ${errno}`)
      : systemErrorCode(error) !== undefined
        ? fileSystemReason(error)
        : redactDatabaseError(error).message;
  return new StartupError('TORII_DATA_DIR', `PGlite could not ${what} its database in ${directory}: ${reason}`, {
    cause: error,
  });
}

/**
 * Opens the gateway's database from the environment and applies pending migrations.
 *
 * - `DATABASE_URL` set: Postgres through postgres-js, a pool of `TORII_DATABASE_POOL_MAX` connections (default 4).
 *   Small on purpose: the database is off the request path (key cache misses, the admin API, one usage batch at a
 *   time per process), and every cluster worker and replica opens its own pool, so 4 per process keeps 8 cores x
 *   several replicas well under Postgres's default `max_connections` of 100 (LiteLLM's "too many clients" failure
 *   came from large per-process pools). Migrations are serialised across processes by an advisory lock.
 * - Otherwise (`TORII_DATABASE` unset or `sqlite`): SQLite through the runtime's `node:sqlite` in
 *   `<TORII_DATA_DIR>/torii.sqlite` (WAL mode), its statements run by `options.sqliteExecutor` (a worker thread by
 *   default), migrated from src/db/sqlite-migrations. Opens in milliseconds and costs tens of MB, where PGlite took
 *   seconds and hundreds of MB (see bench/README.md).
 * - `TORII_DATABASE=pglite`: PGlite, Postgres compiled to WebAssembly running in this process, stored in
 *   `<TORII_DATA_DIR>/pglite` (default `./.torii/pglite`; the data directory may hold other local state too, such
 *   as spilled usage). Only ONE process may open a PGlite directory; in a cluster, the primary owns it.
 * - `TORII_DATABASE=off` opens nothing: callers check {@link readDatabaseSetting} first.
 *
 * @example
 * ```ts
 * const database = await openDatabase(process.env);
 * const keys = database.kind === 'sqlite' ? createSqliteKeyStore(database.db) : createDrizzleKeyStore(database.db);
 * // ... on shutdown, after the usage queue has flushed:
 * await database.close();
 * ```
 */
export async function openDatabase(
  environment: NodeJS.ProcessEnv,
  options: OpenDatabaseOptions = {},
): Promise<OpenDatabase> {
  const setting = readDatabaseSetting(environment);
  if (setting === 'off') throw new StartupError('TORII_DATABASE', 'is "off": no database is opened (a bug)');
  if (setting === 'sqlite') {
    return openSqliteDatabase({
      directory: resolve(environment.TORII_DATA_DIR || './.torii'),
      executor: options.sqliteExecutor ?? openSqliteWorkerThreadExecutor(),
      ...(options.migrate === false ? {} : { migrationsFolder: findSqliteMigrationsFolder(environment) }),
    });
  }
  return openPostgresDatabase(environment, options);
}

/**
 * Opens Postgres (`DATABASE_URL`) or else the embedded PGlite, whatever `TORII_DATABASE` says, and applies pending
 * migrations: what {@link openDatabase} does for `postgres` and `pglite`, for callers that need the Postgres
 * dialect (the Workers queue consumer's tests, the Postgres and PGlite test drivers).
 *
 * @example
 * ```ts
 * const database = await openPostgresDatabase({ DATABASE_URL: 'postgres://localhost/torii' });
 * const keys = createDrizzleKeyStore(database.db);
 * ```
 */
export async function openPostgresDatabase(
  environment: NodeJS.ProcessEnv,
  options: Pick<OpenDatabaseOptions, 'migrate'> = {},
): Promise<OpenPostgresDatabase> {
  const url = environment.DATABASE_URL;
  const migrations = options.migrate === false ? undefined : findMigrationsFolder(environment);
  if (url) {
    const where = checkDatabaseUrl(url);
    const max = poolMax(environment);
    const { postgres, drizzle } = await loadPostgresDriver();
    if (migrations) {
      try {
        await migratePostgres(url, migrations);
      } catch (error) {
        throw new StartupError(
          'DATABASE_URL',
          `cannot open or migrate the database at ${where}: ${redactDatabaseError(error).message}`,
          { cause: error },
        );
      }
    }
    const client = postgres(url, {
      max,
      // Close idle connections so a quiet process gives its connections back.
      idle_timeout: 60,
      connect_timeout: 10,
      onnotice: () => {},
      connection: { application_name: 'torii' },
    });
    return {
      db: drizzle({ client }),
      kind: 'postgres',
      close: () => client.end({ timeout: 5 }),
    };
  }

  const directory = resolve(environment.TORII_DATA_DIR || './.torii', 'pglite');
  try {
    mkdirSync(directory, { recursive: true });
  } catch (error) {
    throw new StartupError('TORII_DATA_DIR', `cannot create ${directory}: ${fileSystemReason(error)}`, {
      cause: error,
    });
  }
  const driver = await loadPgliteDriver();
  let client: PGlite;
  try {
    client = await driver.PGlite.create(directory);
  } catch (error) {
    throw pgliteFailure(directory, 'open', error);
  }
  try {
    if (migrations) await migratePglite(client, migrations);
  } catch (error) {
    await client.close().catch(() => {});
    throw pgliteFailure(directory, 'migrate', error);
  }
  return {
    db: driver.drizzle({ client }),
    kind: 'pglite',
    close: () => client.close(),
  };
}
