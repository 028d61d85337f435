import { join, resolve } from 'node:path';
import type { KeyStore } from '../../src/auth/key-store.ts';
import { createDrizzleKeyStore } from '../../src/db/drizzle-key-store.ts';
import { createDrizzleUsageQuery } from '../../src/db/drizzle-usage-query.ts';
import { createDrizzleUsageSink } from '../../src/db/drizzle-usage-sink.ts';
import type { UsageQuery } from '../../src/usage/usage-query.ts';
import { createUsageQueue, type UsageQueue, type UsageQueueOptions } from '../../src/usage/usage-queue.ts';
import { openDatabase, type OpenDatabase } from './database-open.ts';
import { openFileUsageSpill, type FileUsageSpill } from './usage-spill-files.ts';

/** The database-owning half of the accounting: the key store, the ledger's reader and writer, the disk spill. */
export interface DatabaseAccountingStores {
  database: OpenDatabase;
  keyStore: KeyStore;
  usageQuery: UsageQuery;
  /** Usage events on their way to the ledger (batched, retried, spilled to disk when the database is away). */
  usageQueue: UsageQueue;
  /** The disk spill in `<dataDirectory>/usage-spill`; absent when opened with `spill: false`. */
  spill: FileUsageSpill | undefined;
  /**
   * Flushes the usage queue (what cannot be written within `timeoutMs` goes to the spill), then closes the spill and
   * the database.
   */
  close(timeoutMs: number): Promise<void>;
}

/** Where {@link openDatabaseAccountingStores} opens its parts. */
export interface DatabaseAccountingStoresOptions {
  /**
   * The environment `openDatabase` reads: `DATABASE_URL` (else PGlite in `TORII_DATA_DIR`), `TORII_DATABASE_POOL_MAX`,
   * `TORII_MIGRATIONS_DIR`.
   */
  environment: Record<string, string | undefined>;
  /** Local state (`usage-spill/`, and `pglite/` without DATABASE_URL); default `TORII_DATA_DIR` or `.torii`. */
  dataDirectory?: string;
  /** Keep a disk spill for usage the database cannot take (default true). */
  spill?: boolean;
  /** Apply pending migrations under the advisory lock first (default true). */
  migrate?: boolean;
  /** Tuning of the usage queue (batch size, delay, memory bound). */
  queue?: Omit<UsageQueueOptions, 'sink' | 'spill'>;
}

/**
 * Opens the database (postgres-js with `DATABASE_URL`, PGlite on local disk otherwise, migrated), the Drizzle key
 * store and usage reader, and the usage queue writing through the Drizzle sink with a file spill. A Node single
 * process, the Node cluster primary, Deno and the library's `openDatabaseAccounting` all open theirs here.
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
  const database = await openDatabase(
    { ...options.environment, TORII_DATA_DIR: dataDirectory },
    { migrate: options.migrate !== false },
  );
  let spill: FileUsageSpill | undefined;
  try {
    spill =
      options.spill === false ? undefined : await openFileUsageSpill({ directory: join(dataDirectory, 'usage-spill') });
  } catch (error) {
    await database.close();
    throw error;
  }
  const usageQueue = createUsageQueue({
    ...options.queue,
    sink: createDrizzleUsageSink(database.db),
    ...(spill === undefined ? {} : { spill }),
  });
  return {
    database,
    keyStore: createDrizzleKeyStore(database.db),
    usageQuery: createDrizzleUsageQuery(database.db),
    usageQueue,
    spill,
    async close(timeoutMs) {
      await usageQueue.flush({ timeoutMs });
      await spill?.close();
      await database.close();
    },
  };
}
