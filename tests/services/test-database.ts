import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { openSqliteWorkerThreadExecutor } from '../../adapters/shared/sqlite-worker-thread.ts';
import { openPostgresDatabase, type OpenPostgresDatabase } from '../../adapters/shared/database-open.ts';
import { findSqliteMigrationsFolder } from '../../adapters/shared/database-migrations-folder.ts';
import {
  drizzleOverSqliteExecutor,
  openSqliteDatabase,
  type OpenSqliteDatabase,
} from '../../adapters/shared/sqlite-database-open.ts';
import type { SqliteStatement } from '../../adapters/shared/sqlite-engine.ts';
import type { SqliteExecutor } from '../../adapters/shared/sqlite-executor.ts';
import type { ToriiSqliteDatabase } from '../../src/db/sqlite-database.ts';
import type { KeyStore } from '../../src/auth/key-store.ts';
import { createDrizzleKeyStore, type DrizzleKeyStoreOptions } from '../../src/db/drizzle-key-store.ts';
import { createDrizzleResponseStore, type DrizzleResponseStoreOptions } from '../../src/db/drizzle-response-store.ts';
import { createDrizzleUsageQuery } from '../../src/db/drizzle-usage-query.ts';
import {
  createDrizzleUsageSink,
  createPostgresJsonUsageSink,
  usageInsertStatement,
} from '../../src/db/drizzle-usage-sink.ts';
import { openPostgresUsageThread } from '../../adapters/node/postgres-usage-thread.ts';
import { createSqliteKeyStore } from '../../src/db/sqlite-key-store.ts';
import { createSqliteResponseStore } from '../../src/db/sqlite-response-store.ts';
import { createSqliteUsageQuery } from '../../src/db/sqlite-usage-query.ts';
import { createSqliteUsageSink } from '../../src/db/sqlite-usage-sink.ts';
import type { ResponseStore } from '../../src/responses/response-store.ts';
import type { UsageSink } from '../../src/usage/usage-event.ts';
import type { UsageSinkTurnOptions } from '../../src/usage/usage-sink-turns.ts';
import type { UsageQuery } from '../../src/usage/usage-query.ts';

/** A database of its own for one test file, migrated, dropped by `drop()`. */
export interface TestDatabase extends OpenPostgresDatabase {
  /** The database's URL (for child processes, or a second pool); empty for PGlite. */
  url: string;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/** `TORII_TEST_DATABASE_URL`, or an error saying where it comes from. Never skip a test for want of it. */
export function testDatabaseUrl(): string {
  const url = process.env.TORII_TEST_DATABASE_URL;
  if (!url) {
    throw new Error(
      'TORII_TEST_DATABASE_URL is not set. Run the tests through vitest (tests/services/global-setup.ts starts a ' +
        'PostgreSQL server), or set it to a server whose user may CREATE DATABASE.',
    );
  }
  return url;
}

/** The URL of another database on the same server as `url`. */
function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/**
 * Creates an empty database with a random name on the test server, without migrating it (for migration tests).
 * Returns its URL and a function that drops it (`WITH (FORCE)`: open connections are cut).
 */
export async function createEmptyTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const serverUrl = testDatabaseUrl();
  const name = `torii_test_${crypto.randomUUID().replaceAll('-', '')}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  return {
    url: withDatabase(serverUrl, name),
    async drop() {
      const dropper = postgres(serverUrl, { max: 1, onnotice: () => {} });
      try {
        await dropper.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await dropper.end({ timeout: 5 });
      }
    },
  };
}

/**
 * A fresh database for one test file, created with a random name and migrated through the real `openPostgresDatabase`, so
 * test files run in parallel without seeing each other's rows.
 *
 * @example
 * ```ts
 * let database: TestDatabase;
 * beforeAll(async () => (database = await createTestDatabase()));
 * afterAll(() => database.drop());
 * ```
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const empty = await createEmptyTestDatabase();
  let opened: OpenPostgresDatabase;
  try {
    opened = await openPostgresDatabase({ DATABASE_URL: empty.url });
  } catch (error) {
    await empty.drop();
    throw error;
  }
  return {
    ...opened,
    url: empty.url,
    async drop() {
      await opened.close();
      await empty.drop();
    },
  };
}

/**
 * A fresh PGlite database in a temporary directory, migrated through the real `openPostgresDatabase`; `drop()` closes it and
 * removes the directory. For running a store's tests on the embedded driver too.
 */
export async function createTestPglite(): Promise<TestDatabase> {
  const directory = await mkdtemp(join(tmpdir(), 'torii-test-pglite-'));
  let opened: OpenPostgresDatabase;
  try {
    opened = await openPostgresDatabase({ TORII_DATA_DIR: directory });
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  return {
    ...opened,
    url: '',
    async drop() {
      await opened.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** The drivers a Postgres store's tests run on, by name, for `describe.each`. */
export const testDatabaseDrivers = [
  { driver: 'postgres', create: createTestDatabase },
  { driver: 'pglite', create: createTestPglite },
] as const;

/** A SQLite database of its own in a temporary directory, migrated; `drop()` closes it and removes the directory. */
export interface TestSqliteDatabase extends OpenSqliteDatabase {
  directory: string;
  /**
   * The same database again, recording what its executor is sent: each single statement in `statements`, each
   * batch (one transaction) in `batches`.
   */
  recording(): {
    db: ToriiSqliteDatabase;
    executor: SqliteExecutor;
    statements: SqliteStatement[];
    batches: SqliteStatement[][];
  };
  drop(): Promise<void>;
}

/**
 * A fresh SQLite database in a temporary directory, opened the way Node opens it (statements on the worker thread)
 * and migrated from src/db/sqlite-migrations.
 */
export async function createTestSqlite(): Promise<TestSqliteDatabase> {
  const directory = await mkdtemp(join(tmpdir(), 'torii-test-sqlite-'));
  let opened: OpenSqliteDatabase;
  try {
    opened = await openSqliteDatabase({
      directory,
      executor: openSqliteWorkerThreadExecutor(),
      migrationsFolder: findSqliteMigrationsFolder({}),
    });
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  return {
    ...opened,
    directory,
    recording() {
      const statements: SqliteStatement[] = [];
      const batches: SqliteStatement[][] = [];
      const recorded: SqliteExecutor = {
        ...opened.executor,
        execute: (statement) => {
          statements.push(statement);
          return opened.executor.execute(statement);
        },
        batch: (batch) => {
          batches.push([...batch]);
          return opened.executor.batch(batch);
        },
      };
      return { db: drizzleOverSqliteExecutor(recorded), executor: recorded, statements, batches };
    },
    async drop() {
      await opened.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** The four database-backed stores over one test database, whichever its driver. */
export interface TestStores {
  /** The database underneath, for a test's own checks (`kind` tells its dialect). */
  database: TestDatabase | TestSqliteDatabase;
  keyStore(options?: DrizzleKeyStoreOptions): KeyStore;
  usageSink(turns?: UsageSinkTurnOptions): UsageSink;
  usageQuery(): UsageQuery;
  responseStore(options?: DrizzleResponseStoreOptions): ResponseStore;
  /** Closes and removes the database. */
  drop(): Promise<void>;
}

/** The stores of the dialect of `database`. */
export function storesOver(database: TestDatabase | TestSqliteDatabase): TestStores {
  if (database.kind === 'sqlite') {
    const { db } = database;
    return {
      database,
      keyStore: (options) => createSqliteKeyStore(db, options),
      usageSink: (turns) => createSqliteUsageSink(database.executor, turns),
      usageQuery: () => createSqliteUsageQuery(db),
      responseStore: (options) => createSqliteResponseStore(db, options),
      drop: () => database.drop(),
    };
  }
  const { db } = database;
  return {
    database,
    keyStore: (options) => createDrizzleKeyStore(db, options),
    usageSink: (turns) => createDrizzleUsageSink(db, turns),
    usageQuery: () => createDrizzleUsageQuery(db),
    responseStore: (options) => createDrizzleResponseStore(db, options),
    drop: () => database.drop(),
  };
}

/**
 * The drivers the store conformance tests run on (src/db/drizzle-*.test.ts): every case runs on Postgres, PGlite and
 * SQLite, each creating a database of its own.
 *
 * @example
 * ```ts
 * describe.each(testStoreDrivers)('key store on $driver', ({ create }) => {
 *   let stores: TestStores;
 *   beforeAll(async () => (stores = await create()), 60_000);
 *   afterAll(() => stores?.drop());
 * });
 * ```
 */
export const testStoreDrivers = [
  { driver: 'postgres', create: async () => storesOver(await createTestDatabase()) },
  { driver: 'pglite', create: async () => storesOver(await createTestPglite()) },
  { driver: 'sqlite', create: async () => storesOver(await createTestSqlite()) },
] as const;

/**
 * The drivers the usage sink's conformance cases run on (src/db/drizzle-usage-sink.test.ts): the store drivers, and
 * Postgres written through the Node server's usage thread (adapters/node/postgres-usage-thread.ts).
 *
 * @example
 * ```ts
 * describe.each(testUsageSinkDrivers)('usage sink on $driver', ({ create }) => {});
 * ```
 */
export const testUsageSinkDrivers = [
  ...testStoreDrivers,
  {
    driver: 'postgres usage thread',
    create: async (): Promise<TestStores> => {
      const database = await createTestDatabase();
      const thread = openPostgresUsageThread({
        url: database.url,
        threadFile: new URL('../../adapters/node/postgres-usage-thread-main.ts', import.meta.url),
        statement: usageInsertStatement,
      });
      return {
        ...storesOver(database),
        usageSink: (turns) => createPostgresJsonUsageSink(thread.insert, turns),
        async drop() {
          await thread.close();
          await database.drop();
        },
      };
    },
  },
] as const;
