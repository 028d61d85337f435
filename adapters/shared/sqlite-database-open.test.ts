import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { usageEventFixture } from '../../src/db/test-utils/usage-event-fixture.ts';
import { openDatabaseAccountingStores } from './database-accounting-stores.ts';
import { findSqliteMigrationsFolder } from './database-migrations-folder.ts';
import { openDatabase } from './database-open.ts';
import { readDatabaseSetting } from './database-setting.ts';
import { openSqliteDatabase, sqliteFileName } from './sqlite-database-open.ts';
import { openInlineSqliteExecutor } from './sqlite-executor.ts';
import { isStartupError } from './startup-error.ts';

describe('the embedded SQLite database', () => {
  let directory: string;
  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'torii-sqlite-open-'));
  });
  afterEach(() => rm(directory, { recursive: true, force: true }));

  it('is the default without DATABASE_URL: TORII_DATABASE chooses sqlite, pglite or off', async () => {
    expect(readDatabaseSetting({})).toBe('sqlite');
    expect(readDatabaseSetting({ TORII_DATABASE: ' SQLite ' })).toBe('sqlite');
    expect(readDatabaseSetting({ TORII_DATABASE: 'pglite' })).toBe('pglite');
    expect(readDatabaseSetting({ TORII_DATABASE: 'off' })).toBe('off');
    expect(readDatabaseSetting({ DATABASE_URL: 'postgres://db/torii' })).toBe('postgres');
    expect(() => readDatabaseSetting({ TORII_DATABASE: 'mysql' })).toThrow(
      /TORII_DATABASE: must be one of sqlite, pglite, off, got "mysql"/,
    );
    expect(() => readDatabaseSetting({ TORII_DATABASE: 'sqlite', DATABASE_URL: 'postgres://db/torii' })).toThrow(
      /TORII_DATABASE: is "sqlite" but DATABASE_URL is set/,
    );
    const database = await openDatabase({ TORII_DATA_DIR: directory }, { sqliteExecutor: openInlineSqliteExecutor });
    try {
      expect(database.kind).toBe('sqlite');
      expect(database.kind === 'sqlite' && database.path).toBe(join(directory, sqliteFileName));
    } finally {
      await database.close();
    }
    // Without an executor it runs on a worker thread of its own.
    const threaded = await openDatabase({ TORII_DATA_DIR: directory });
    try {
      expect(threaded.kind).toBe('sqlite');
    } finally {
      await threaded.close();
    }
    await expect(openDatabase({ TORII_DATA_DIR: directory, TORII_DATABASE: 'off' })).rejects.toThrow(/TORII_DATABASE/);
  });

  it('finds its migrations from the sources and from dist/, or where TORII_SQLITE_MIGRATIONS_DIR says', () => {
    const root = new URL('../../', import.meta.url);
    const expected = join(root.pathname, 'src', 'db', 'sqlite-migrations');
    expect(findSqliteMigrationsFolder({})).toBe(expected);
    for (const built of ['dist/server.js', 'dist/lib/node.js']) {
      expect(findSqliteMigrationsFolder({}, new URL(built, root).href)).toBe(expected);
    }
    expect(findSqliteMigrationsFolder({ TORII_SQLITE_MIGRATIONS_DIR: expected }, 'file:///nowhere/x.js')).toBe(
      expected,
    );
    expect(() => findSqliteMigrationsFolder({ TORII_SQLITE_MIGRATIONS_DIR: '/nowhere' })).toThrow(
      /TORII_SQLITE_MIGRATIONS_DIR/,
    );
  });

  it('names TORII_DATA_DIR when the directory or the file cannot be used', async () => {
    const file = join(directory, 'a-file');
    await writeFile(file, 'x');
    const notADirectory = await openSqliteDatabase({ directory: file, executor: openInlineSqliteExecutor }).catch(
      (error: unknown) => error,
    );
    expect(isStartupError(notADirectory) && notADirectory.setting).toBe('TORII_DATA_DIR');
    expect(String(notADirectory)).toMatch(/cannot create .*a-file/);

    await mkdir(join(directory, sqliteFileName));
    const isADirectory = await openSqliteDatabase({ directory, executor: openInlineSqliteExecutor }).catch(
      (error: unknown) => error,
    );
    expect(isStartupError(isADirectory) && isADirectory.setting).toBe('TORII_DATA_DIR');
    expect(String(isADirectory)).toMatch(/SQLite could not open .*torii\.sqlite: unable to open database file/);
  });

  it('names TORII_DATA_DIR when a migration fails, and applies nothing of it', async () => {
    const broken = join(directory, 'migrations');
    await mkdir(join(broken, 'meta'), { recursive: true });
    await writeFile(
      join(broken, 'meta', '_journal.json'),
      JSON.stringify({
        version: '7',
        dialect: 'sqlite',
        entries: [{ idx: 0, when: 1, tag: '0000_broken', breakpoints: true }],
      }),
    );
    await writeFile(
      join(broken, '0000_broken.sql'),
      'create table kept (a integer);\n--> statement-breakpoint\nnot sql;',
    );
    const data = join(directory, 'data');
    const failure = await openSqliteDatabase({
      directory: data,
      executor: openInlineSqliteExecutor,
      migrationsFolder: broken,
    }).catch((error: unknown) => error);
    expect(isStartupError(failure) && failure.setting).toBe('TORII_DATA_DIR');
    expect(String(failure)).toMatch(/SQLite could not migrate .*syntax error/);
    const reopened = await openSqliteDatabase({ directory: data, executor: openInlineSqliteExecutor });
    try {
      const tables = await reopened.executor.execute({
        sql: "select name from sqlite_master where type = 'table' and name = 'kept'",
        params: [],
        method: 'all',
      });
      expect(tables.rows).toEqual([]);
    } finally {
      await reopened.close();
    }
  });

  it('opens the accounting stores over SQLite, guarded and with the free-space check', async () => {
    const stores = await openDatabaseAccountingStores({
      environment: {},
      dataDirectory: directory,
      sqliteExecutor: openInlineSqliteExecutor,
      minFreeBytes: 0,
      queue: { maxDelayMs: 10 },
    });
    try {
      expect(stores.database.kind).toBe('sqlite');
      const key = await stores.keyStore.create({ id: 'key_1', hash: 'b'.repeat(64), prefix: 'p', name: 'n' });
      expect(await stores.keyStore.findByHash('b'.repeat(64))).toEqual(key);
      // A database failure leaves the store redacted, with SQLite's code.
      await expect(
        stores.keyStore.create({ id: 'key_2', hash: 'b'.repeat(64), prefix: 'p', name: 'n' }),
      ).rejects.toMatchObject({
        name: 'DatabaseOperationError',
        code: 'SQLITE_CONSTRAINT',
        message: 'database error SQLITE_CONSTRAINT: UNIQUE constraint failed: virtual_keys.key_hash',
      });
      stores.usageQueue.enqueue(usageEventFixture({ keyId: 'key_1', costUsd: 1.5 }));
      await stores.usageQueue.flush({ timeoutMs: 5_000 });
      expect(await stores.usageQuery.spendByKey(['key_1'], 0)).toEqual(new Map([['key_1', 1.5]]));
    } finally {
      await stores.close(5_000);
    }

    // The reserve applies to the data directory's disk: with more asked than any disk has, writes are refused.
    const full = await openDatabaseAccountingStores({
      environment: {},
      dataDirectory: directory,
      sqliteExecutor: openInlineSqliteExecutor,
      minFreeBytes: Number.MAX_SAFE_INTEGER,
      spill: false,
    });
    try {
      await expect(
        full.keyStore.create({ id: 'key_3', hash: 'c'.repeat(64), prefix: 'p', name: 'n' }),
      ).rejects.toMatchObject({
        code: 'ENOSPC',
      });
      expect(await full.keyStore.findById('key_1')).toMatchObject({ id: 'key_1' });
    } finally {
      await full.close(1_000);
    }
  });
});
