import { join, resolve } from 'node:path';
import { setImmediate } from 'node:timers';
import type { KeyStore } from '../../src/auth/key-store.ts';
import { createDrizzleKeyStore } from '../../src/db/drizzle-key-store.ts';
import { createDrizzleResponseStore } from '../../src/db/drizzle-response-store.ts';
import { createDrizzleUsageQuery } from '../../src/db/drizzle-usage-query.ts';
import { createDrizzleUsageSink, createPostgresJsonUsageSink } from '../../src/db/drizzle-usage-sink.ts';
import { createSqliteKeyStore } from '../../src/db/sqlite-key-store.ts';
import { createSqliteResponseStore } from '../../src/db/sqlite-response-store.ts';
import { createSqliteUsageQuery } from '../../src/db/sqlite-usage-query.ts';
import { createSqliteUsageSink } from '../../src/db/sqlite-usage-sink.ts';
import type { UsageSinkTurnOptions } from '../../src/usage/usage-sink-turns.ts';
import type { ResponseStore } from '../../src/responses/response-store.ts';
import type { UsageQuery } from '../../src/usage/usage-query.ts';
import {
  createUsageQueue,
  type UsageQueue,
  type UsageQueueFlushResult,
  type UsageQueueOptions,
} from '../../src/usage/usage-queue.ts';
import { createFreeSpaceCheck, readMinFreeBytes } from './data-directory-space.ts';
import { guardDatabaseMethods } from './database-errors.ts';
import { openDatabase, type OpenDatabase } from './database-open.ts';
import type { SqliteExecutorFactory } from './sqlite-executor.ts';
import { fileSystemReason, StartupError } from './startup-error.ts';
import { openFileUsageSpill, type FileUsageSpill } from './usage-spill-files.ts';

/**
 * The database-owning half of the accounting: the key store, the ledger's reader and writer, the disk spill, and the
 * Responses API's stored responses.
 */
export interface DatabaseAccountingStores {
  database: OpenDatabase;
  keyStore: KeyStore;
  usageQuery: UsageQuery;
  /** The Responses API's stored responses, in the same database (for `createGateway`'s `responses`). */
  responseStore: ResponseStore;
  /** Usage events on their way to the ledger (batched, retried, spilled to disk when the database is away). */
  usageQueue: UsageQueue;
  /** The disk spill in `<dataDirectory>/usage-spill`; absent when opened with `spill: false`. */
  spill: FileUsageSpill | undefined;
  /**
   * Flushes the usage queue (what cannot be written within `timeoutMs` goes to the spill), then closes the spill and
   * the database. Resolves with what the flush did (`dropped` above 0: events lost, the spill could not take them).
   */
  close(timeoutMs: number): Promise<UsageQueueFlushResult>;
}

/**
 * Runs the ledger's insert (`usageInsertStatement`, `$1` the batch's JSON) away from the request thread: the Node
 * server's usage thread (adapters/node/postgres-usage-thread.ts).
 */
export interface PostgresUsageWriter {
  /** Inserts one batch; settles once it is committed, or rejects with the database's error. */
  insert(batchJson: string): Promise<void>;
  /** Lets the inserts already sent finish, then releases the writer's connection. */
  close(): Promise<void>;
}

/** Where {@link openDatabaseAccountingStores} opens its parts. */
export interface DatabaseAccountingStoresOptions {
  /**
   * The environment `openDatabase` reads: `DATABASE_URL` (else the embedded database `TORII_DATABASE`
   * chooses, `sqlite` by default or `pglite`, in `TORII_DATA_DIR`), `TORII_DATABASE_POOL_MAX`, `TORII_MIGRATIONS_DIR`,
   * `TORII_SQLITE_MIGRATIONS_DIR`.
   */
  environment: Record<string, string | undefined>;
  /**
   * Local state (`usage-spill/`, and `pglite/` or `torii.sqlite` without DATABASE_URL); default `TORII_DATA_DIR` or
   * `.torii`.
   */
  dataDirectory?: string;
  /**
   * Where the embedded SQLite database runs its statements (see `OpenDatabaseOptions.sqliteExecutor`); default a
   * worker thread of its own (`openSqliteWorkerThreadExecutor()`).
   */
  sqliteExecutor?: SqliteExecutorFactory;
  /** Keep a disk spill for usage the database cannot take (default true). */
  spill?: boolean;
  /** Apply pending migrations under the advisory lock first (default true). */
  migrate?: boolean;
  /**
   * With `DATABASE_URL`: opens the writer the ledger's batches go through instead of the request thread's pool (the
   * Node server passes its usage thread). Keys, usage reports and stored responses keep the pool.
   */
  postgresUsageWriter?: (databaseUrl: string) => PostgresUsageWriter;
  /** Tuning of the usage queue (batch size, delay, memory bound). */
  queue?: Omit<UsageQueueOptions, 'sink' | 'spill'>;
  /**
   * Free space kept on the data directory's disk, bytes: PGlite writes and spill appends fail (counted, logged) while
   * less is free. Default `TORII_DATA_DIR_MIN_FREE_BYTES` from `environment`, else 64 MiB (see data-directory-space.ts).
   */
  minFreeBytes?: number;
}

/**
 * Opens the database (postgres-js with `DATABASE_URL`, else PGlite or SQLite on local disk, migrated), the Drizzle
 * key store, usage reader and response store of its kind, and the usage queue writing through the Drizzle sink with a file spill. A
 * Node single process, the Node cluster primary, Deno and the library's `openDatabaseAccounting` all open theirs here.
 *
 * @example
 * ```ts
 * const stores = await openDatabaseAccountingStores({ environment: process.env });
 * stores.usageQueue.enqueue(event);
 * await stores.close(5_000); // on shutdown
 * ```
 */
export async function openDatabaseAccountingStores(
  options: DatabaseAccountingStoresOptions,
): Promise<DatabaseAccountingStores> {
  const dataDirectory = resolve(options.dataDirectory ?? (options.environment.TORII_DATA_DIR || '.torii'));
  const minFreeBytes = options.minFreeBytes ?? readMinFreeBytes(options.environment);
  const database = await openDatabase(
    { ...options.environment, TORII_DATA_DIR: dataDirectory },
    {
      migrate: options.migrate !== false,
      ...(options.sqliteExecutor === undefined ? {} : { sqliteExecutor: options.sqliteExecutor }),
    },
  );
  let spill: FileUsageSpill | undefined;
  const spillDirectory = join(dataDirectory, 'usage-spill');
  try {
    spill = options.spill === false ? undefined : await openFileUsageSpill({ directory: spillDirectory, minFreeBytes });
  } catch (error) {
    await database.close();
    throw new StartupError(
      'TORII_DATA_DIR',
      `cannot use ${spillDirectory} for the usage spill: ${fileSystemReason(error)}`,
      {
        cause: error,
      },
    );
  }
  // PGlite and SQLite write into this disk: stop writing before it is full (see data-directory-space.ts). Postgres
  // keeps its own disk. Every error leaves the database layer redacted (no parameters in logs, see database-errors.ts).
  const beforeWrite =
    database.kind === 'pglite'
      ? createFreeSpaceCheck(join(dataDirectory, 'pglite'), minFreeBytes).ensure
      : database.kind === 'sqlite'
        ? createFreeSpaceCheck(dataDirectory, minFreeBytes).ensure
        : undefined;
  const guard = { ...(beforeWrite === undefined ? {} : { beforeWrite }) };
  // The sinks encode a batch a slice per turn of the event loop; setImmediate is the next turn without the 1 ms a
  // zero-delay timer costs on Node (src/usage/usage-sink-turns.ts).
  const turns: UsageSinkTurnOptions = { nextTurn: () => new Promise((resolve) => setImmediate(resolve)) };
  const databaseUrl = options.environment.DATABASE_URL;
  const usageWriter =
    database.kind === 'postgres' && databaseUrl && options.postgresUsageWriter
      ? options.postgresUsageWriter(databaseUrl)
      : undefined;
  const stores =
    database.kind === 'sqlite'
      ? {
          keyStore: createSqliteKeyStore(database.db),
          usageSink: createSqliteUsageSink(database.executor, turns),
          usageQuery: createSqliteUsageQuery(database.db),
          responseStore: createSqliteResponseStore(database.db),
        }
      : {
          keyStore: createDrizzleKeyStore(database.db),
          usageSink:
            usageWriter === undefined
              ? createDrizzleUsageSink(database.db, turns)
              : createPostgresJsonUsageSink(usageWriter.insert, turns),
          usageQuery: createDrizzleUsageQuery(database.db),
          responseStore: createDrizzleResponseStore(database.db),
        };
  const usageQueue = createUsageQueue({
    // A batch at least every 100 ms rather than the queue's 1 s: an event waiting a second for its batch outlives two
    // or three scavenges of V8's young generation and is copied into the old one, and at 1,000 requests a second
    // those copies (~220 KB a scavenge measured, against ~86 KB at 100 ms) lengthened every scavenge and brought
    // mark-compacts of 15-20 ms, the production shape's p99. At full load batches fill to 500 rows sooner anyway; at
    // 1,000 requests a second this is ten one-statement inserts a second instead of two.
    maxDelayMs: 100,
    ...options.queue,
    sink: guardDatabaseMethods(stores.usageSink, { ...guard, writes: ['write'] }),
    ...(spill === undefined ? {} : { spill }),
  });
  return {
    database,
    keyStore: guardDatabaseMethods(stores.keyStore, {
      ...guard,
      writes: ['create', 'update', 'revoke', 'rotate'],
    }),
    usageQuery: guardDatabaseMethods(stores.usageQuery),
    // Its statements carry conversations: redacted like the others, never logged with their parameters.
    responseStore: guardDatabaseMethods(stores.responseStore, { ...guard, writes: ['put'] }),
    usageQueue,
    spill,
    async close(timeoutMs) {
      const flushed = await usageQueue.flush({ timeoutMs });
      await spill?.close();
      await usageWriter?.close();
      await database.close();
      return flushed;
    },
  };
}
