import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { openDatabase, type OpenDatabase } from '../../adapters/shared/database-open.ts';

/** A database of its own for one test file, migrated, dropped by `drop()`. */
export interface TestDatabase extends OpenDatabase {
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
 * A fresh database for one test file, created with a random name and migrated through the real `openDatabase`, so
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
  let opened: OpenDatabase;
  try {
    opened = await openDatabase({ DATABASE_URL: empty.url });
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
 * A fresh PGlite database in a temporary directory, migrated through the real `openDatabase`; `drop()` closes it and
 * removes the directory. For running a store's tests on the embedded driver too.
 */
export async function createTestPglite(): Promise<TestDatabase> {
  const directory = await mkdtemp(join(tmpdir(), 'torii-test-pglite-'));
  let opened: OpenDatabase;
  try {
    opened = await openDatabase({ TORII_DATA_DIR: directory });
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

/** The drivers a store's tests run on, by name, for `describe.each`. */
export const testDatabaseDrivers = [
  { driver: 'postgres', create: createTestDatabase },
  { driver: 'pglite', create: createTestPglite },
] as const;
