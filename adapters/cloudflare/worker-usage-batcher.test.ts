import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToriiDatabase } from '../../src/db/database.ts';
import { createDrizzleUsageSink } from '../../src/db/drizzle-usage-sink.ts';
import type { GatewayLogger } from '../../src/services.ts';
import type { UsageEvent } from '../../src/usage/usage-event.ts';
import { testUsageEvent } from '../../src/usage/usage-queue-test-events.ts';
import { migratePostgres } from '../shared/database-migrate.ts';
import { findMigrationsFolder } from '../shared/database-migrations-folder.ts';
import { openPostgresDatabase, type OpenPostgresDatabase } from '../shared/database-open.ts';
import { createEmptyTestDatabase, createTestDatabase, type TestDatabase } from '../../tests/services/test-database.ts';
import { createWorkerUsageBatcher, type WorkerUsageBatcherOptions } from './worker-usage-batcher.ts';

/** A logger that keeps every line with its fields. */
function fieldLogger() {
  const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const keep =
    (level: string) =>
    (message: string, fields: Record<string, unknown> = {}) =>
      void lines.push({ level, message, fields });
  const logger: GatewayLogger = { info: keep('info'), warn: keep('warn'), error: keep('error') };
  return { logger, lines };
}

/** A batcher whose `keepAlive` keeps what it is handed, as an invocation's `waitUntil` would. */
function batcherOn(db: ToriiDatabase, options: Partial<WorkerUsageBatcherOptions> = {}) {
  const keptAlive: Promise<unknown>[] = [];
  const { logger, lines } = fieldLogger();
  const batcher = createWorkerUsageBatcher({
    sink: createDrizzleUsageSink(db),
    keepAlive: (work) => void keptAlive.push(work),
    logger,
    ...options,
  });
  return { batcher, keptAlive, lines };
}

const eventsWithPrefix = (prefix: string, count: number): UsageEvent[] =>
  Array.from({ length: count }, (_, index) => ({ ...testUsageEvent(index), requestId: `${prefix}-${index}` }));

async function storedRequestIds(db: ToriiDatabase, prefix: string): Promise<string[]> {
  const rows = (await db.execute(
    sql`select request_id from usage_events where starts_with(request_id, ${prefix}) order by request_id`,
  )) as unknown as { request_id: string }[];
  return rows.map((row) => row.request_id);
}

describe('createWorkerUsageBatcher on PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  }, 60_000);
  afterAll(() => database?.drop());

  it('writes the events recorded within the batch delay together, kept alive by every request whose event it holds', async () => {
    const { batcher, keptAlive } = batcherOn(database.db, { batchDelayMs: 50 });
    const events = eventsWithPrefix('batched', 3);
    for (const event of events) batcher.record(event);
    expect(keptAlive).toHaveLength(3);
    expect(new Set(keptAlive).size).toBe(1);
    expect(await storedRequestIds(database.db, 'batched')).toEqual([]);
    await Promise.all(keptAlive);
    expect(await storedRequestIds(database.db, 'batched')).toEqual(events.map((event) => event.requestId).sort());
    expect(batcher.stats()).toEqual({ written: 3, failedWrites: 0, lost: 0 });
    // The next event opens a new batch.
    batcher.record(eventsWithPrefix('batched-later', 1)[0] as UsageEvent);
    expect(new Set(keptAlive).size).toBe(2);
    await Promise.all(keptAlive);
    expect(batcher.stats().written).toBe(4);
  });

  it('writes a full batch at once, without waiting for the delay', async () => {
    const { batcher, keptAlive } = batcherOn(database.db, { batchDelayMs: 60_000, maxBatchSize: 2 });
    for (const event of eventsWithPrefix('full', 4)) batcher.record(event);
    expect(new Set(keptAlive).size).toBe(2);
    await Promise.all(keptAlive);
    expect(await storedRequestIds(database.db, 'full')).toHaveLength(4);
  });

  it('retries a failed write until the database takes it', async () => {
    const empty = await createEmptyTestDatabase();
    // The ledger's table does not exist yet: every insert fails until the migrations run.
    const unmigrated: OpenPostgresDatabase = await openPostgresDatabase(
      { DATABASE_URL: empty.url },
      { migrate: false },
    );
    try {
      const { batcher, keptAlive, lines } = batcherOn(unmigrated.db, { batchDelayMs: 0 });
      batcher.record(eventsWithPrefix('retried', 1)[0] as UsageEvent);
      for (let wait = 0; batcher.stats().failedWrites === 0 && wait < 100; wait++)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(batcher.stats().failedWrites).toBeGreaterThan(0);
      await migratePostgres(empty.url, findMigrationsFolder({}));
      await Promise.all(keptAlive);
      expect(batcher.stats()).toMatchObject({ written: 1, lost: 0 });
      expect(await storedRequestIds(unmigrated.db, 'retried')).toEqual(['retried-0']);
      expect(lines.some((line) => line.level === 'warn' && line.message.includes('retrying'))).toBe(true);
    } finally {
      await unmigrated.close();
      await empty.drop();
    }
  });

  it('gives a batch up after giveUpAfterMs and logs every event of it at error level', async () => {
    const empty = await createEmptyTestDatabase();
    const unmigrated = await openPostgresDatabase({ DATABASE_URL: empty.url }, { migrate: false });
    try {
      const { batcher, keptAlive, lines } = batcherOn(unmigrated.db, { batchDelayMs: 0, giveUpAfterMs: 400 });
      const events = eventsWithPrefix('lost', 120);
      for (const event of events) batcher.record(event);
      await Promise.all(keptAlive);
      expect(batcher.stats()).toMatchObject({ written: 0, lost: 120 });
      const lost = lines.filter((line) => line.level === 'error' && line.message.startsWith('usage events lost'));
      expect(lost.length).toBe(3);
      expect(lost.flatMap((line) => line.fields.events as UsageEvent[])).toEqual(events);
    } finally {
      await unmigrated.close();
      await empty.drop();
    }
  });
});
