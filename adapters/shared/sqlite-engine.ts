/**
 * The synchronous core of the embedded SQLite database: it opens one `node:sqlite` `DatabaseSync` and runs statements,
 * batches and migrations on it. Both executors run this same code: the inline one (Deno, tests) calls it directly, and
 * the Node worker thread (adapters/shared/sqlite-worker-thread.ts) runs its source text, which is why
 * {@link createSqliteEngine} is self-contained: it uses nothing from outside its own body but its arguments (no
 * imports, no module constants), so `createSqliteEngine.toString()` is a complete program wherever it was bundled.
 * (It must stay unminified: a minifier or esbuild's `keepNames` would rename or wrap what the text refers to.)
 */
import type { SqliteRawStatement } from '../../src/db/sqlite-database.ts';

/** One statement as drizzle's sqlite-proxy driver hands it over (the type src/db owns). */
export type SqliteStatement = SqliteRawStatement;

/** What a statement answers, in the shape sqlite-proxy expects. */
export interface SqliteStatementResult {
  rows: unknown;
}

/** One migration of the drizzle journal: its statements, its hash and its time (the journal's `when`). */
export interface SqliteMigration {
  sql: string[];
  hash: string;
  folderMillis: number;
}

/** A SQLite failure as plain data (it crosses the thread boundary): the message and `SQLITE_<primary code>`. */
export interface SqliteFailure {
  message: string;
  code: string;
}

/** The connection settings. */
export interface SqliteEngineSettings {
  /** How long a statement waits for another connection's lock before failing with SQLITE_BUSY, ms. */
  busyTimeoutMs: number;
  /** The WAL size SQLite truncates the file to after a checkpoint, bytes (`journal_size_limit`). */
  journalSizeLimitBytes: number;
}

/** The open database, synchronous. */
export interface SqliteEngine {
  execute(statement: SqliteStatement): SqliteStatementResult;
  /** Runs the statements in one `begin immediate` transaction: all of them or none. */
  batch(statements: readonly SqliteStatement[]): SqliteStatementResult[];
  /**
   * Applies the migrations newer than the last one recorded in `__drizzle_migrations` (drizzle's own table and
   * rule), all in one `begin immediate` transaction, so a second process starting at the same time waits for the
   * first and then finds nothing to do. Answers how many it applied.
   */
  migrate(migrations: readonly SqliteMigration[]): number;
  /** Checkpoints the WAL into the database file and truncates it, then closes. */
  close(): void;
  /** Describes anything a call threw as a {@link SqliteFailure}. */
  describeFailure(error: unknown): SqliteFailure;
}

/** The constructor of `node:sqlite`'s `DatabaseSync`, as far as the engine uses it. */
export type DatabaseSyncConstructor = new (path: string) => {
  exec(sql: string): void;
  prepare(sql: string): {
    run(...params: unknown[]): unknown;
    all(...params: unknown[]): unknown[];
    get(...params: unknown[]): unknown;
    setReturnArrays?(enabled: boolean): void;
  };
  close(): void;
};

/**
 * Opens `path` with `DatabaseSync` and sets it up: `busy_timeout` first (so the other settings wait for a second
 * process instead of failing), `journal_mode=WAL` (readers never block the writer), `synchronous=NORMAL` (durable at
 * every checkpoint; a power cut may lose the last transactions, never corrupt the file), `foreign_keys=ON` (no table
 * has one today; on for the day one does) and `journal_size_limit`. The WAL is checkpointed by SQLite's default
 * `wal_autocheckpoint` (every 1,000 pages, on the thread that commits) and truncated at close.
 *
 * @example
 * ```ts
 * const engine = createSqliteEngine(DatabaseSync, '/var/lib/torii/torii.sqlite', settings);
 * engine.execute({ sql: 'select 1', params: [], method: 'get' }); // { rows: [1] }
 * ```
 */
export function createSqliteEngine(
  Database: DatabaseSyncConstructor,
  path: string,
  settings: SqliteEngineSettings,
): SqliteEngine {
  const database = new Database(path);
  try {
    database.exec(`pragma busy_timeout = ${Math.floor(settings.busyTimeoutMs)}`);
    database.exec('pragma journal_mode = wal');
    database.exec('pragma synchronous = normal');
    database.exec('pragma foreign_keys = on');
    database.exec(`pragma journal_size_limit = ${Math.floor(settings.journalSizeLimitBytes)}`);
  } catch (error) {
    database.close();
    throw error;
  }
  type Prepared = ReturnType<InstanceType<DatabaseSyncConstructor>['prepare']>;
  // Prepared statements by text: the stores send a few dozen distinct statements, over and over.
  const prepared = new Map<string, Prepared>();
  const maxPrepared = 200;

  const prepare = (text: string): Prepared => {
    let statement = prepared.get(text);
    if (statement === undefined) {
      statement = database.prepare(text);
      if (typeof statement.setReturnArrays === 'function') statement.setReturnArrays(true);
      if (prepared.size >= maxPrepared) prepared.clear();
      prepared.set(text, statement);
    }
    return statement;
  };

  // node:sqlite binds numbers, bigints, strings, null and bytes; booleans and undefined become 0/1 and null.
  const bindable = (value: unknown): unknown =>
    value === undefined ? null : typeof value === 'boolean' ? (value ? 1 : 0) : value;

  const asArray = (row: unknown): unknown =>
    row === undefined || Array.isArray(row) ? row : Object.values(row as Record<string, unknown>);

  const execute = (statement: SqliteStatement): SqliteStatementResult => {
    const compiled = prepare(statement.sql);
    const params = statement.params.map(bindable);
    if (statement.method === 'run') {
      compiled.run(...params);
      return { rows: [] };
    }
    if (statement.method === 'get') return { rows: asArray(compiled.get(...params)) };
    return { rows: compiled.all(...params).map(asArray) };
  };

  const inTransaction = <Result>(work: () => Result): Result => {
    database.exec('begin immediate');
    let result: Result;
    try {
      result = work();
    } catch (error) {
      try {
        database.exec('rollback');
      } catch {
        // SQLite already rolled back (some errors end the transaction themselves).
      }
      throw error;
    }
    database.exec('commit');
    return result;
  };

  const primaryCodes: Record<number, string> = {
    1: 'ERROR',
    2: 'INTERNAL',
    3: 'PERM',
    4: 'ABORT',
    5: 'BUSY',
    6: 'LOCKED',
    7: 'NOMEM',
    8: 'READONLY',
    9: 'INTERRUPT',
    10: 'IOERR',
    11: 'CORRUPT',
    13: 'FULL',
    14: 'CANTOPEN',
    15: 'PROTOCOL',
    17: 'SCHEMA',
    18: 'TOOBIG',
    19: 'CONSTRAINT',
    20: 'MISMATCH',
    21: 'MISUSE',
    23: 'AUTH',
    25: 'RANGE',
    26: 'NOTADB',
  };

  return {
    execute,
    batch: (statements) => inTransaction(() => statements.map(execute)),
    migrate(migrations) {
      return inTransaction(() => {
        database.exec(
          'create table if not exists "__drizzle_migrations" (id integer primary key, hash text not null, created_at numeric)',
        );
        const last = database.prepare('select max(created_at) as "last" from "__drizzle_migrations"').get() as
          Record<string, unknown> | unknown[] | undefined;
        const value = Array.isArray(last) ? last[0] : last?.last;
        const lastMillis = value === null || value === undefined ? -Infinity : Number(value);
        let applied = 0;
        for (const migration of migrations) {
          if (migration.folderMillis <= lastMillis) continue;
          for (const text of migration.sql) if (text.trim() !== '') database.exec(text);
          database
            .prepare('insert into "__drizzle_migrations" ("hash", "created_at") values (?, ?)')
            .run(migration.hash, migration.folderMillis);
          applied += 1;
        }
        return applied;
      });
    },
    close() {
      prepared.clear();
      try {
        database.exec('pragma wal_checkpoint(truncate)');
      } catch {
        // Another connection is reading: the WAL is checkpointed by whoever closes last.
      }
      database.close();
    },
    describeFailure(error) {
      const { message, errcode } = (error ?? {}) as { message?: unknown; errcode?: unknown };
      const text = typeof message === 'string' ? message : String(error);
      if (typeof errcode !== 'number') return { message: text, code: 'SQLITE_ERROR' };
      return { message: text, code: `SQLITE_${primaryCodes[errcode & 0xff] ?? String(errcode & 0xff)}` };
    },
  };
}
