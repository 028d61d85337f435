import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findSqliteMigrationsFolder } from './database-migrations-folder.ts';
import { redactDatabaseError } from './database-errors.ts';
import { openSqliteDatabase, sqliteFileName } from './sqlite-database-open.ts';
import { defaultSqliteEngineSettings, type SqliteExecutor } from './sqlite-executor.ts';
import { createSqliteKeyStore } from '../../src/db/sqlite-key-store.ts';
import { openSqliteWorkerThreadExecutor } from './sqlite-worker-thread.ts';

const migrationsFolder = findSqliteMigrationsFolder({});
/** How many migrations the journal lists. */
const journalEntries = (
  JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] }
).entries.length;

describe('the SQLite worker thread', () => {
  let directory: string;
  const opened: SqliteExecutor[] = [];
  const open = async (options: Parameters<typeof openSqliteWorkerThreadExecutor>[0] = {}, settings = {}) => {
    const executor = await openSqliteWorkerThreadExecutor(options)(join(directory, sqliteFileName), {
      ...defaultSqliteEngineSettings,
      ...settings,
    });
    opened.push(executor);
    return executor;
  };
  const select = (sql: string, params: unknown[] = []) => ({ sql, params, method: 'all' as const });

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'torii-sqlite-thread-'));
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((executor) => executor.close()));
    await rm(directory, { recursive: true, force: true });
  });

  it('applies the migrations once: reopening, and two processes opening at once, apply nothing again', async () => {
    const [first, second] = await Promise.all([
      openSqliteDatabase({ directory, executor: openSqliteWorkerThreadExecutor(), migrationsFolder }),
      openSqliteDatabase({ directory, executor: openSqliteWorkerThreadExecutor(), migrationsFolder }),
    ]);
    const applied = await first.executor.execute(select('select count(*) from "__drizzle_migrations"'));
    expect(applied.rows).toEqual([[journalEntries]]);
    // Both work on the same file: a key one creates, the other finds.
    const key = await createSqliteKeyStore(first.db).create({
      id: 'key_1',
      hash: 'a'.repeat(64),
      prefix: 'p',
      name: 'n',
    });
    expect(await createSqliteKeyStore(second.db).findByHash('a'.repeat(64))).toEqual(key);
    await first.close();
    await second.close();

    const again = await openSqliteDatabase({ directory, executor: openSqliteWorkerThreadExecutor(), migrationsFolder });
    expect(await again.executor.migrate([])).toBe(0);
    expect((await again.executor.execute(select('select count(*) from "__drizzle_migrations"'))).rows).toEqual([
      [journalEntries],
    ]);
    expect(await createSqliteKeyStore(again.db).findById('key_1')).toEqual(key);
    expect((await again.executor.execute(select('pragma journal_mode'))).rows).toEqual([['wal']]);
    await again.close();
  });

  it('rejects a failing statement with SQLite message and code, and keeps serving', async () => {
    const executor = await open();
    const failure = await executor.execute(select('select * from nowhere')).catch((error: unknown) => error);
    expect(failure).toMatchObject({ name: 'SqliteError', code: 'SQLITE_ERROR', message: 'no such table: nowhere' });
    await executor.execute({ sql: 'create table t (a integer not null unique)', params: [], method: 'run' });
    await executor.execute({ sql: 'insert into t values (?)', params: [1], method: 'run' });
    const duplicate = await executor
      .execute({ sql: 'insert into t values (?)', params: [1], method: 'run' })
      .catch((error: unknown) => error);
    expect(duplicate).toMatchObject({ code: 'SQLITE_CONSTRAINT', message: 'UNIQUE constraint failed: t.a' });
    // Redacted for logs, the code and SQLite's reason stay.
    expect(redactDatabaseError(duplicate).message).toBe(
      'database error SQLITE_CONSTRAINT: UNIQUE constraint failed: t.a',
    );
    // A batch is one transaction: the failing second statement undoes the first.
    await expect(
      executor.batch([
        { sql: 'insert into t values (?)', params: [2], method: 'run' },
        { sql: 'insert into t values (?)', params: [1], method: 'run' },
      ]),
    ).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT' });
    // A parameter that cannot cross to the thread fails its call only.
    await expect(executor.execute(select('select ?', [() => 1]))).rejects.toMatchObject({ code: 'SQLITE_MISUSE' });
    expect((await executor.execute(select('select a from t order by a'))).rows).toEqual([[1]]);
  });

  it('rejects a call still pending at close once the close times out, and every call after close', async () => {
    const executor = await open({ closeTimeoutMs: 200 }, { busyTimeoutMs: 3_000 });
    await executor.execute({ sql: 'create table t (a integer)', params: [], method: 'run' });
    // Another connection holds the write lock: the thread's insert waits for it (up to the busy timeout).
    const holder = new DatabaseSync(join(directory, sqliteFileName));
    holder.exec('begin immediate');
    try {
      const pending = executor.execute({ sql: 'insert into t values (1)', params: [], method: 'run' });
      const outcome = pending.then(
        () => 'resolved',
        (error: unknown) => error,
      );
      const started = Date.now();
      await executor.close();
      expect(await outcome).toMatchObject({ code: 'SQLITE_MISUSE', message: 'the SQLite database is closed' });
      expect(Date.now() - started).toBeLessThan(2_000);
      await expect(executor.execute(select('select 1'))).rejects.toMatchObject({ code: 'SQLITE_MISUSE' });
    } finally {
      holder.exec('rollback');
      holder.close();
    }
  });

  it('fails the pending calls of a thread that dies, and the calls after', async () => {
    let thread: Worker | undefined;
    const executor = await open({ onThread: (worker) => (thread = worker) }, { busyTimeoutMs: 3_000 });
    await executor.execute({ sql: 'create table t (a integer)', params: [], method: 'run' });
    const holder = new DatabaseSync(join(directory, sqliteFileName));
    holder.exec('begin immediate');
    try {
      const pending = executor.execute({ sql: 'insert into t values (1)', params: [], method: 'run' });
      const outcome = pending.then(
        () => 'resolved',
        (error: unknown) => error,
      );
      await thread!.terminate();
      expect(await outcome).toMatchObject({
        code: 'SQLITE_ABORT',
        message: expect.stringMatching(/SQLite thread ended/),
      });
      await expect(executor.execute(select('select 1'))).rejects.toMatchObject({ code: 'SQLITE_ABORT' });
      await executor.close();
    } finally {
      holder.exec('rollback');
      holder.close();
    }
  });

  it('never keeps the process alive: a process that leaves it open still exits', async () => {
    const module = new URL('./sqlite-worker-thread.ts', import.meta.url).href;
    const program = `
      import { openSqliteWorkerThreadExecutor } from ${JSON.stringify(module)};
      const executor = await openSqliteWorkerThreadExecutor()(${JSON.stringify(join(directory, sqliteFileName))}, ${JSON.stringify(defaultSqliteEngineSettings)});
      const { rows } = await executor.execute({ sql: 'select 41 + 1', params: [], method: 'get' });
      console.log(rows[0]);`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', program], {
      timeout: 20_000,
    });
    expect(stdout.trim()).toBe('42');
  }, 30_000);

  it.runIf(process.platform === 'linux')(
    'runs below the priority of the thread that serves requests, and at it when told 0',
    async () => {
      const module = new URL('./sqlite-worker-thread.ts', import.meta.url).href;
      // In a process of its own, whose only worker thread is the SQLite one: its niceness is read from /proc.
      const program = (niceness: string) => `
        import { readdirSync, readFileSync } from 'node:fs';
        import { openSqliteWorkerThreadExecutor } from ${JSON.stringify(module)};
        const executor = await openSqliteWorkerThreadExecutor(${niceness})(${JSON.stringify(join(directory, sqliteFileName))}, ${JSON.stringify(defaultSqliteEngineSettings)});
        const threads = readdirSync('/proc/self/task').map((id) => {
          const stat = readFileSync('/proc/self/task/' + id + '/stat', 'utf8');
          const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          return { id, name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), nice: Number(fields[16]) };
        });
        await executor.close();
        console.log(JSON.stringify({ main: threads.find((thread) => thread.id === String(process.pid)).nice, sqlite: threads.filter((thread) => thread.name === 'WorkerThread').map((thread) => thread.nice) }));`;
      const run = async (niceness: string) =>
        JSON.parse(
          (
            await promisify(execFile)(process.execPath, ['--input-type=module', '-e', program(niceness)], {
              timeout: 20_000,
            })
          ).stdout,
        ) as { main: number; sqlite: number[] };
      const defaults = await run('');
      expect(defaults.sqlite).toEqual([Math.min(19, defaults.main + 10)]);
      const untouched = await run('{ niceness: 0 }');
      expect(untouched.sqlite).toEqual([untouched.main]);
    },
    30_000,
  );

  it('runs from an esbuild bundle like dist/server.js (the thread is the engine source text)', async () => {
    const { build } = await import('esbuild');
    const entry = join(directory, 'entry.ts');
    const module = new URL('./sqlite-worker-thread.ts', import.meta.url).pathname;
    await writeFile(
      entry,
      `import { openSqliteWorkerThreadExecutor } from ${JSON.stringify(module)};
      const executor = await openSqliteWorkerThreadExecutor()(${JSON.stringify(join(directory, sqliteFileName))}, ${JSON.stringify(defaultSqliteEngineSettings)});
      const { rows } = await executor.execute({ sql: 'select 41 + 1', params: [], method: 'get' });
      await executor.close();
      console.log(rows[0]);`,
    );
    // The options of scripts/build.mjs's server bundle. (A minified or `keepNames` bundle would rename or wrap the
    // engine's source text; the build uses neither.)
    const bundle = join(directory, 'server.js');
    await build({
      entryPoints: [entry],
      outfile: bundle,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      logLevel: 'silent',
    });
    const { stdout } = await promisify(execFile)(process.execPath, [bundle], { timeout: 20_000 });
    expect(stdout.trim()).toBe('42');
  }, 30_000);

  it('refuses to open a file that is not a database', async () => {
    await writeFile(join(directory, sqliteFileName), 'not a database, just text that is long enough to have a header');
    await expect(open()).rejects.toMatchObject({ code: 'SQLITE_CANTOPEN', message: 'file is not a database' });
  });
});
