import type { Worker } from 'node:worker_threads';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usageBatchJson, usageInsertStatement } from '../../src/db/drizzle-usage-sink.ts';
import { usageEventFixture } from '../../src/db/test-utils/usage-event-fixture.ts';
import { createTestDatabase, type TestDatabase } from '../../tests/services/test-database.ts';
import { redactDatabaseError } from '../shared/database-errors.ts';
import { migratePostgres } from '../shared/database-migrate.ts';
import { findMigrationsFolder } from '../shared/database-migrations-folder.ts';
import { startRestartablePostgres } from '../../tests/e2e/accounting-postgres.ts';
import { openPostgresUsageThread } from './postgres-usage-thread.ts';

const threadFile = new URL('./postgres-usage-thread-main.ts', import.meta.url);

/** The JSON of one batch of events with these request ids. */
const batchOf = (...requestIds: string[]) =>
  usageBatchJson(requestIds.map((requestId) => usageEventFixture({ requestId })));

/** A usage thread on `url`, and the list of the worker threads it started (in order). */
function openWatchedThread(url: string) {
  const threads: Worker[] = [];
  const thread = openPostgresUsageThread({
    url,
    threadFile,
    statement: usageInsertStatement,
    onThread: (started) => threads.push(started),
  });
  return { thread, threads };
}

/** Resolves once `thread` has exited. */
const exited = (thread: Worker) => new Promise<void>((resolve) => thread.once('exit', () => resolve()));

describe('the Postgres usage thread', () => {
  let database: TestDatabase;
  let reader: postgres.Sql;
  /** The request ids stored under `prefix`, in order. */
  const stored = async (prefix: string) =>
    (
      await reader<{ request_id: string }[]>`select request_id from usage_events
        where request_id like ${`${prefix}%`} order by request_id`
    ).map((row) => row.request_id);

  beforeAll(async () => {
    database = await createTestDatabase();
    reader = postgres(database.url, { max: 1, onnotice: () => {} });
  }, 60_000);
  afterAll(async () => {
    await reader?.end({ timeout: 5 });
    await database?.drop();
  });

  it('inserts batches in the order they are sent, on a thread of its own that starts with the first', async () => {
    const { thread, threads } = openWatchedThread(database.url);
    expect(threads).toHaveLength(0);
    const batches = await Promise.all([batchOf('order-1', 'order-2'), batchOf('order-3'), batchOf('order-1')]);
    await Promise.all(batches.map((batch) => thread.insert(batch)));
    expect(threads).toHaveLength(1);
    expect(await stored('order-')).toEqual(['order-1', 'order-2', 'order-3']);
    await thread.close();
    await expect(thread.insert(await batchOf('order-4'))).rejects.toThrow(/closed/);
  });

  it("rejects with the database's code, which the accounting stores redact", async () => {
    const thread = openPostgresUsageThread({ url: database.url, threadFile, statement: usageInsertStatement });
    const json = await usageBatchJson([
      usageEventFixture({ requestId: 'refused-1' }),
      usageEventFixture({ requestId: 'refused-2', inputTokens: 3_000_000_000 }),
    ]);
    const failure = await thread.insert(json).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: '22003' });
    expect(redactDatabaseError(failure).message).toMatch(/^database error 22003: /);
    expect(await stored('refused-')).toEqual([]);
    // The thread lives on: the next batch goes in.
    await thread.insert(await batchOf('refused-3'));
    expect(await stored('refused-')).toEqual(['refused-3']);
    await thread.close();
  });

  it('fails what was in flight when its thread dies, and starts a new one for the next batch', async () => {
    const { thread, threads } = openWatchedThread(database.url);
    await thread.insert(await batchOf('revive-1'));
    const inFlight = thread.insert(await batchOf('revive-2'));
    const gone = exited(threads[0]!);
    await threads[0]!.terminate();
    await gone;
    // Terminated before its answer came back, the insert is reported failed (it may have committed all the same: the
    // queue's retry of it then counts once, on conflict do nothing); if the answer won the race, it succeeded.
    await inFlight.catch((error: unknown) => expect(String(error)).toMatch(/usage thread (ended|failed)/));
    await thread.insert(await batchOf('revive-2', 'revive-3'));
    expect(threads).toHaveLength(2);
    expect(await stored('revive-')).toEqual(['revive-1', 'revive-2', 'revive-3']);
    await thread.close();
  });

  it('closes after the batches already sent, and at once when it never started', async () => {
    const idle = openPostgresUsageThread({ url: database.url, threadFile, statement: usageInsertStatement });
    await idle.close();
    const { thread, threads } = openWatchedThread(database.url);
    const sent = Promise.all(
      await Promise.all(['close-1', 'close-2', 'close-3'].map((id) => batchOf(id))).then((batches) =>
        batches.map((batch) => thread.insert(batch)),
      ),
    );
    const gone = exited(threads[0]!);
    await thread.close();
    await sent;
    await gone;
    expect(await stored('close-')).toEqual(['close-1', 'close-2', 'close-3']);
  });

  it('fails a batch for a database it cannot reach, without ending', async () => {
    const unreachable = new URL(database.url);
    unreachable.port = '1';
    const thread = openPostgresUsageThread({
      url: unreachable.toString(),
      threadFile,
      statement: usageInsertStatement,
    });
    const failure = await thread.insert(await batchOf('unreachable-1')).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: 'ECONNREFUSED' });
    expect(redactDatabaseError(failure).message).toMatch(/^database unavailable: /);
    await thread.close();
  });

  it('reconnects with the first batch after the database comes back, however many batches failed', async () => {
    // A server of its own to stop. postgres-js would wait 10-20 s before reconnecting after eight failed attempts
    // (its backoff grows 3x an attempt); the usage queue paces the retries itself, so the thread must not.
    const restartable = await startRestartablePostgres();
    const thread = openPostgresUsageThread({ url: restartable.url, threadFile, statement: usageInsertStatement });
    try {
      await migratePostgres(restartable.url, findMigrationsFolder({}));
      await thread.insert(await batchOf('outage-0'));
      await restartable.stop();
      for (let attempt = 1; attempt <= 8; attempt++)
        await expect(thread.insert(await batchOf(`outage-${attempt}`))).rejects.toMatchObject({
          code: 'ECONNREFUSED',
        });
      await restartable.start();
      const started = performance.now();
      await thread.insert(await batchOf('outage-9'));
      expect(performance.now() - started).toBeLessThan(5_000);
    } finally {
      await thread.close();
      await restartable.destroy();
    }
  }, 60_000);
});
