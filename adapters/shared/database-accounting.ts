import { hash } from 'node:crypto';
import {
  assembleAccounting,
  type AccountingParts,
  type AssembledAccounting,
} from '../../src/accounting/accounting-assembly.ts';
import { createLocalKeyInvalidationBus } from '../../src/auth/local-key-invalidation-bus.ts';
import type { ResponseStore } from '../../src/responses/response-store.ts';
import type { UsageQueue, UsageQueueOptions } from '../../src/usage/usage-queue.ts';
import { consoleLogger } from '../../src/services.ts';
import { openDatabaseAccountingStores } from './database-accounting-stores.ts';
import type { OpenDatabase } from './database-open.ts';

/** What {@link openDatabaseAccounting} is made with. Only `masterKey` is required. */
export interface DatabaseAccountingOptions extends Pick<
  AccountingParts,
  | 'sharedCache'
  | 'invalidations'
  | 'limitStore'
  | 'rateLimitMode'
  | 'budgetCounters'
  | 'localKeyTtlMs'
  | 'keyLookup'
  | 'logger'
> {
  /** The master key: it administers keys (`/admin/*`) and is always accepted. At least 8 characters. */
  masterKey: string;
  /**
   * `postgres://...`: Postgres through postgres-js. Omitted: the embedded database in `dataDirectory`
   * (`embeddedDatabase`).
   */
  databaseUrl?: string;
  /**
   * Without `databaseUrl`: `sqlite` (default; `dataDirectory/torii.sqlite` through the runtime's `node:sqlite`, on a
   * worker thread) or `pglite` (embedded Postgres in `dataDirectory/pglite`, in this thread).
   */
  embeddedDatabase?: 'sqlite' | 'pglite';
  /** Local state: the usage spill (`usage-spill/`) and, without `databaseUrl`, the embedded database. Default `.torii`. */
  dataDirectory?: string;
  /** Size of the postgres-js pool (default 4): the database is off the request path. */
  poolMax?: number;
  /** Apply pending migrations on open, under a Postgres advisory lock (default true). */
  migrate?: boolean;
  /** Where the migrations are (default: found from the package's own location; `src/db/migrations`). */
  migrationsFolder?: string;
  /** Keep a disk spill for usage the database cannot take in time (default true; false on a read-only disk). */
  spill?: boolean;
  /** Tuning of the usage queue: batch size (500), delay (1 s), memory bound (20,000 events). */
  usageQueue?: Omit<UsageQueueOptions, 'sink' | 'spill'>;
  /**
   * Free space kept on the data directory's disk, bytes (default 64 MiB): embedded database writes and spill appends
   * fail, counted in `usageQueue.stats()`, while less is free (PGlite spins forever once Postgres panics on a full
   * disk; SQLite fails its commit).
   */
  minFreeBytes?: number;
}

/** Keys, limits, budgets and the ledger over a database, ready for `createGateway`'s `accounting` option. */
export interface DatabaseAccounting extends AssembledAccounting {
  /** Which database was opened. */
  database: Pick<OpenDatabase, 'db' | 'kind'>;
  /** The ledger's queue (its `stats()` are worth exporting as metrics). */
  usageQueue: UsageQueue;
  /**
   * The Responses API's stored responses, in the same database (`stored_responses`): for `createGateway`'s
   * `responses` option, which the library's `createGateway` fills from it by itself.
   */
  responseStore: ResponseStore;
  /**
   * Shutdown, after the server stopped taking requests and in-flight ones finished: pushes pending budget spend,
   * flushes the usage queue (what the database cannot take within `timeoutMs`, default 5 s, goes to the disk spill),
   * and closes the database.
   */
  close(options?: { timeoutMs?: number }): Promise<void>;
}

/**
 * Opens everything virtual keys, rate limits, budgets and the usage ledger need from one database: postgres-js (with
 * `databaseUrl`) or the embedded SQLite (or PGlite) on local disk, migrated; the Drizzle key store and usage reader; the batching usage queue
 * writing through the Drizzle sink with a disk spill; all assembled with {@link assembleAccounting}. Also the
 * Responses API's store of responses, in the same database. Runs on Node and Deno.
 *
 * Alone, everything but the database is per process: limits count locally and budgets live in memory, and key
 * changes made through this process's admin API apply at once while other processes notice them within
 * `localKeyTtlMs` (default 30 s). Pass `sharedCache` and `limitStore` (Redis, Upstash) for several instances, and
 * `invalidations` (Redis pub/sub) to make key changes reach them at once.
 *
 * @example
 * ```ts
 * import { Hono } from 'hono';
 * import { serve } from '@hono/node-server';
 * import { createGateway } from 'torii-gateway';
 * import { openDatabaseAccounting } from 'torii-gateway/accounting';
 *
 * const masterKey = process.env.TORII_MASTER_KEY!;
 * const accounting = await openDatabaseAccounting({ masterKey, databaseUrl: process.env.DATABASE_URL });
 * const app = new Hono();
 * app.route('/llm', createGateway(config, { masterKey, accounting, environment: process.env }));
 * const server = serve({ fetch: app.fetch, port: 3000 });
 * process.once('SIGTERM', () => server.close(async () => {
 *   await accounting.close({ timeoutMs: 5_000 }); // budgets pushed, usage written (or spilled), database closed
 *   process.exit(0);
 * }));
 * ```
 */
export async function openDatabaseAccounting(options: DatabaseAccountingOptions): Promise<DatabaseAccounting> {
  const stores = await openDatabaseAccountingStores({
    environment: {
      DATABASE_URL: options.databaseUrl,
      TORII_DATABASE: options.databaseUrl === undefined ? options.embeddedDatabase : undefined,
      TORII_DATABASE_POOL_MAX: options.poolMax === undefined ? undefined : String(options.poolMax),
      TORII_MIGRATIONS_DIR: options.migrationsFolder,
    },
    dataDirectory: options.dataDirectory ?? '.torii',
    spill: options.spill !== false,
    migrate: options.migrate !== false,
    ...(options.usageQueue === undefined ? {} : { queue: options.usageQueue }),
    ...(options.minFreeBytes === undefined ? {} : { minFreeBytes: options.minFreeBytes }),
  });
  const { usageQueue } = stores;
  let assembled: AssembledAccounting;
  try {
    assembled = assembleAccounting({
      masterKey: options.masterKey,
      keyStore: stores.keyStore,
      usageQuery: stores.usageQuery,
      recordUsage: (event) => usageQueue.enqueue(event),
      invalidations: options.invalidations ?? createLocalKeyInvalidationBus(),
      // One-shot, synchronous hashing: the warm key lookup stays free of awaits.
      sha256: (text) => hash('sha256', text, 'buffer'),
      ...(options.sharedCache === undefined ? {} : { sharedCache: options.sharedCache }),
      ...(options.limitStore === undefined ? {} : { limitStore: options.limitStore }),
      ...(options.rateLimitMode === undefined ? {} : { rateLimitMode: options.rateLimitMode }),
      ...(options.budgetCounters === undefined ? {} : { budgetCounters: options.budgetCounters }),
      ...(options.localKeyTtlMs === undefined ? {} : { localKeyTtlMs: options.localKeyTtlMs }),
      ...(options.keyLookup === undefined ? {} : { keyLookup: options.keyLookup }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
  } catch (error) {
    await stores.close(0);
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    ...assembled,
    database: { db: stores.database.db, kind: stores.database.kind },
    usageQueue,
    responseStore: stores.responseStore,
    close({ timeoutMs = 5_000 } = {}) {
      closing ??= (async () => {
        await assembled
          .close()
          .catch((error: unknown) =>
            (options.logger ?? consoleLogger).warn('accounting close failed', { error: String(error) }),
          );
        await stores.close(timeoutMs);
      })();
      return closing;
    },
  };
}
