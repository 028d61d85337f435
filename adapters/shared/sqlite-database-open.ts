import { readMigrationFiles } from 'drizzle-orm/migrator';
import { drizzle } from 'drizzle-orm/sqlite-proxy';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ToriiSqliteDatabase } from '../../src/db/sqlite-database.ts';
import type { SqliteEngineSettings, SqliteStatementResult } from './sqlite-engine.ts';
import { defaultSqliteEngineSettings, type SqliteExecutor, type SqliteExecutorFactory } from './sqlite-executor.ts';
import { fileSystemReason, StartupError } from './startup-error.ts';

/** The database file's name inside the data directory. */
export const sqliteFileName = 'torii.sqlite';

/** Options of {@link openSqliteDatabase}. */
export interface OpenSqliteDatabaseOptions {
  /** The data directory (`TORII_DATA_DIR`); the database is `<directory>/torii.sqlite`. Created when missing. */
  directory: string;
  /** Where the statements run: the Node worker thread, or inline (Deno, tests). */
  executor: SqliteExecutorFactory;
  /** The drizzle-kit folder (src/db/sqlite-migrations) to apply; nothing is migrated when absent. */
  migrationsFolder?: string;
  /** Connection settings (busy timeout, WAL size limit); defaults in {@link defaultSqliteEngineSettings}. */
  settings?: Partial<SqliteEngineSettings>;
}

/** An open SQLite database. */
export interface OpenSqliteDatabase {
  db: ToriiSqliteDatabase;
  kind: 'sqlite';
  /** The database file. */
  path: string;
  /** The executor the Drizzle database sends its statements to. */
  executor: SqliteExecutor;
  /** Checkpoints the WAL and closes the file (and ends the thread, on Node). */
  close(): Promise<void>;
}

/** The sqlite-proxy Drizzle database over `executor`. */
export function drizzleOverSqliteExecutor(executor: SqliteExecutor): ToriiSqliteDatabase {
  type ProxyResult = { rows: any[] }; // eslint-disable-line @typescript-eslint/no-explicit-any -- sqlite-proxy's type
  return drizzle(
    (sql, params, method) => executor.execute({ sql, params, method }) as Promise<ProxyResult>,
    (statements) => executor.batch(statements) as Promise<SqliteStatementResult[]> as Promise<ProxyResult[]>,
  );
}

/**
 * Opens (creating when missing) the embedded SQLite database `<directory>/torii.sqlite` through `executor` and applies
 * the pending migrations of `migrationsFolder` in one `begin immediate` transaction: idempotent, and safe when two
 * processes start at once (the second waits for the first's lock, up to the busy timeout, then finds nothing to do).
 * Failures are {@link StartupError}s naming `TORII_DATA_DIR`.
 *
 * @example
 * ```ts
 * const database = await openSqliteDatabase({
 *   directory: '.torii',
 *   executor: openSqliteWorkerThreadExecutor(),
 *   migrationsFolder: findSqliteMigrationsFolder(),
 * });
 * const keys = createSqliteKeyStore(database.db);
 * await database.close();
 * ```
 */
export async function openSqliteDatabase(options: OpenSqliteDatabaseOptions): Promise<OpenSqliteDatabase> {
  const directory = resolve(options.directory);
  try {
    mkdirSync(directory, { recursive: true });
  } catch (error) {
    throw new StartupError('TORII_DATA_DIR', `cannot create ${directory}: ${fileSystemReason(error)}`, {
      cause: error,
    });
  }
  const path = join(directory, sqliteFileName);
  const migrations =
    options.migrationsFolder === undefined ? [] : readMigrationFiles({ migrationsFolder: options.migrationsFolder });
  let executor: SqliteExecutor;
  try {
    executor = await options.executor(path, { ...defaultSqliteEngineSettings, ...options.settings });
  } catch (error) {
    throw new StartupError('TORII_DATA_DIR', `SQLite could not open ${path}: ${messageOf(error)}`, { cause: error });
  }
  try {
    if (migrations.length > 0) {
      await executor.migrate(migrations.map(({ sql, hash, folderMillis }) => ({ sql, hash, folderMillis })));
    }
  } catch (error) {
    await executor.close().catch(() => {});
    throw new StartupError('TORII_DATA_DIR', `SQLite could not migrate ${path}: ${messageOf(error)}`, {
      cause: error,
    });
  }
  return { db: drizzleOverSqliteExecutor(executor), kind: 'sqlite', path, executor, close: () => executor.close() };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
