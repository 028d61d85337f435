import {
  createSqliteEngine,
  type DatabaseSyncConstructor,
  type SqliteEngineSettings,
  type SqliteFailure,
  type SqliteMigration,
  type SqliteStatement,
  type SqliteStatementResult,
} from './sqlite-engine.ts';

/**
 * Where the embedded SQLite database's statements run. `node:sqlite` is synchronous, so on Node they run on a worker
 * thread (adapters/shared/sqlite-worker-thread.ts), never on the thread that serves requests; Deno and tests may run
 * them inline ({@link openInlineSqliteExecutor}). Every method answers a promise either way.
 */
export interface SqliteExecutor {
  execute(statement: SqliteStatement): Promise<SqliteStatementResult>;
  /** The statements in one transaction: every one or none. */
  batch(statements: readonly SqliteStatement[]): Promise<SqliteStatementResult[]>;
  /** Applies the pending migrations in one `begin immediate` transaction; answers how many it applied. */
  migrate(migrations: readonly SqliteMigration[]): Promise<number>;
  /** Closes the database; calls made after (or still pending when the executor gives up waiting) reject. */
  close(): Promise<void>;
}

/** Opens an executor on the database file at `path` (created when missing). */
export type SqliteExecutorFactory = (path: string, settings: SqliteEngineSettings) => Promise<SqliteExecutor>;

/** The connection settings every executor uses unless told otherwise. */
export const defaultSqliteEngineSettings: SqliteEngineSettings = {
  busyTimeoutMs: 5_000,
  journalSizeLimitBytes: 64 * 1024 * 1024,
};

/**
 * A SQLite failure: the message SQLite gave (which names tables, columns and constraints, never a bound value) and
 * its primary result code as `SQLITE_CONSTRAINT`, `SQLITE_BUSY`, `SQLITE_FULL` ... (what database-errors.ts keeps).
 */
export class SqliteError extends Error {
  readonly code: string;

  constructor(failure: SqliteFailure) {
    super(failure.message);
    this.name = 'SqliteError';
    this.code = failure.code;
  }
}

/** The error an executor rejects with after it was closed. */
export function closedSqliteError(): SqliteError {
  return new SqliteError({ message: 'the SQLite database is closed', code: 'SQLITE_MISUSE' });
}

/**
 * An executor that runs every statement on the calling thread, synchronously inside the returned promises: for Deno,
 * tests and tools. On Node's request path use the worker thread instead (each statement blocks the event loop).
 *
 * @example
 * ```ts
 * const executor = await openInlineSqliteExecutor('/tmp/torii.sqlite', defaultSqliteEngineSettings);
 * await executor.execute({ sql: 'select 1', params: [], method: 'get' });
 * await executor.close();
 * ```
 */
export const openInlineSqliteExecutor: SqliteExecutorFactory = async (path, settings) => {
  // Loaded here, not at the top: modules importing this one must not need `node:sqlite` (flagged before Node 22.13)
  // unless SQLite is actually opened.
  const { DatabaseSync } = await import('node:sqlite');
  let engine: ReturnType<typeof createSqliteEngine> | undefined;
  try {
    engine = createSqliteEngine(DatabaseSync as unknown as DatabaseSyncConstructor, path, settings);
  } catch (error) {
    throw new SqliteError({
      message: error instanceof Error ? error.message : String(error),
      code: 'SQLITE_CANTOPEN',
    });
  }
  const run = async <Result>(work: (open: NonNullable<typeof engine>) => Result): Promise<Result> => {
    const open = engine;
    if (open === undefined) throw closedSqliteError();
    try {
      return work(open);
    } catch (error) {
      throw new SqliteError(open.describeFailure(error));
    }
  };
  return {
    execute: (statement) => run((open) => open.execute(statement)),
    batch: (statements) => run((open) => open.batch(statements)),
    migrate: (migrations) => run((open) => open.migrate(migrations)),
    async close() {
      const open = engine;
      engine = undefined;
      open?.close();
    },
  };
};
