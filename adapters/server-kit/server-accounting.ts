import { resolve } from 'node:path';
import type { GatewayLogger } from '../../src/services.ts';
import { openDatabaseAccounting, type DatabaseAccounting } from '../shared/database-accounting.ts';
import { createUpstashKeyValueCache } from '../shared/upstash-key-value-cache.ts';
import { createUpstashLimitStore } from '../shared/upstash-limit-store.ts';
import { createUpstashRedisClient } from '../shared/upstash-redis-client.ts';
import type { ServerSettings } from './server-environment.ts';

/** The accounting a standalone server (Deno, Bun) runs with, and what it is made of (for the start-up log line). */
export interface ServerAccounting {
  accounting: DatabaseAccounting;
  /** `postgres` or `pglite`. */
  database: string;
  /** `upstash (<host>)` or `none`. */
  sharedCache: string;
  /** The mode rate limits run in. */
  rateLimitMode: string;
}

/** What the runtime answers for the server's accounting. */
export interface ServerAccountingRuntime {
  /** Whether this process may write below `path` (Deno: `--allow-write`, asked without prompting). */
  mayWrite(path: string): boolean;
  /** How to tell an operator to let it write, for the log line when it may not (`deno run --allow-write`). */
  writeAccessHint: string;
}

/**
 * Opens a standalone server's (Deno's, Bun's) keys, limits, budgets and ledger, as a Node single process has them:
 *
 * - the database: Postgres through postgres-js with `DATABASE_URL`, otherwise the embedded SQLite in
 *   `TORII_DATA_DIR/torii.sqlite` (on a worker thread; `TORII_DATABASE=pglite` for PGlite, `off` for none);
 *   migrated under the advisory lock; the usage queue writes through the Drizzle sink and spills to
 *   `TORII_DATA_DIR/usage-spill` (without write access there, e.g. on Deno Deploy, it runs without a spill); the
 *   Responses API's stored responses live there too (`accounting.responseStore`);
 * - with `UPSTASH_REDIS_REST_URL` and `_TOKEN`: one Upstash client for the shared key cache, budget counters (slots in
 *   the cache) and rate limits (the Lua scripts of the Redis store, `leased` by default). Upstash's REST API has no
 *   subscription to rely on, so key changes reach other instances through the key cache's local lifetime,
 *   `TORII_KEY_CACHE_TTL_MS` (5 s): an instance re-reads a key from Upstash at most that long after caching it, and
 *   the admin path has written the new record there. Without Upstash everything but the database is per process.
 *
 * Answers undefined (the server then accepts the master key only) with `TORII_DATABASE=off`, or when the embedded
 * database cannot be opened (no write access, or any failure), after logging why. With `DATABASE_URL` set, a failure is fatal: a
 * gateway that dropped the database it was given would refuse every virtual key.
 *
 * @example
 * const opened = await openServerAccounting(readServerSettings(process.env), masterKey, consoleLogger, {
 *   mayWrite: () => true,
 *   writeAccessHint: 'let the process write to TORII_DATA_DIR',
 * });
 */
export async function openServerAccounting(
  settings: ServerSettings,
  masterKey: string,
  logger: GatewayLogger,
  runtime: ServerAccountingRuntime,
): Promise<ServerAccounting | undefined> {
  if (settings.database === 'off') {
    logger.info('TORII_DATABASE=off: no database; serving the master key only, no usage ledger');
    return undefined;
  }
  const dataDirectory = resolve(settings.dataDirectory);
  const writable = runtime.mayWrite(dataDirectory);
  const embedded = settings.database === 'pglite' ? 'PGlite' : 'SQLite';
  const masterKeyOnly = (reason: string): undefined => {
    logger.error(
      'no database: serving the master key only (no virtual keys, rate limits, budgets or usage ledger). ' +
        `Set DATABASE_URL to a Postgres, or let the embedded database write its files (${runtime.writeAccessHint}).`,
      { reason },
    );
    return undefined;
  };
  if (settings.databaseUrl === undefined && !writable)
    return masterKeyOnly(`${embedded} needs write access to ${dataDirectory} and this process has none`);
  if (settings.databaseUrl !== undefined && !writable)
    logger.warn('no disk spill for usage: no write access to TORII_DATA_DIR', { dataDirectory });

  const redis = settings.upstash === undefined ? undefined : createUpstashRedisClient(settings.upstash);
  if (redis !== undefined) {
    try {
      await redis.ping();
    } catch (error) {
      throw new Error(`UPSTASH_REDIS_REST_URL is set but Upstash did not answer: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
  const rateLimitMode = settings.rateLimitMode ?? (redis === undefined ? 'local' : 'leased');
  let accounting: DatabaseAccounting;
  try {
    accounting = await openDatabaseAccounting({
      masterKey,
      ...(settings.databaseUrl === undefined ? {} : { databaseUrl: settings.databaseUrl }),
      ...(settings.database === 'pglite' ? { embeddedDatabase: 'pglite' as const } : {}),
      ...(settings.databasePoolMax === undefined ? {} : { poolMax: settings.databasePoolMax }),
      ...(settings.migrationsFolder === undefined ? {} : { migrationsFolder: settings.migrationsFolder }),
      dataDirectory,
      spill: writable,
      ...(redis === undefined
        ? {}
        : {
            sharedCache: createUpstashKeyValueCache({ redis, prefix: '' }),
            limitStore: createUpstashLimitStore({ redis }),
          }),
      rateLimitMode,
      localKeyTtlMs: settings.keyCacheTtlMs,
      logger,
    });
  } catch (error) {
    if (settings.databaseUrl !== undefined) throw error;
    return masterKeyOnly(`${embedded} could not be opened in ${dataDirectory}: ${String(error)}`);
  }
  return {
    accounting,
    database: accounting.database.kind,
    sharedCache: settings.upstash === undefined ? 'none' : `upstash (${new URL(settings.upstash.url).host})`,
    rateLimitMode,
  };
}
