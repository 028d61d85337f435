import type { SqliteRemoteDatabase } from 'drizzle-orm/sqlite-proxy';

/**
 * A Drizzle database over SQLite through the async `sqlite-proxy` driver: the statements run wherever the adapter's
 * executor runs them (a Node worker thread, or inline on Deno), so the stores in this folder never import
 * `node:sqlite`. `batch` runs its statements in one transaction.
 */
export type ToriiSqliteDatabase = SqliteRemoteDatabase<Record<string, never>>;

/** One statement with its bound parameters, as the SQLite executor of the adapter runs it. */
export interface SqliteRawStatement {
  sql: string;
  params: unknown[];
  /** `run` (no rows), `all` and `values` (every row, as arrays), `get` (the first row). */
  method: 'run' | 'all' | 'values' | 'get';
}

/**
 * Runs statements in one transaction, all or none: the adapter's SQLite executor. The usage sink writes through it
 * directly, past Drizzle's query builder, which costs tens of milliseconds of the calling thread per 500 rows.
 */
export interface SqliteStatementBatcher {
  batch(statements: readonly SqliteRawStatement[]): Promise<unknown>;
}
