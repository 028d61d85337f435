import { asc, count, eq, sql } from 'drizzle-orm';
import type { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseDrivers, type TestDatabase } from '../../tests/services/test-database.ts';
import type { UsageEvent } from '../usage/usage-event.ts';
import type { ToriiDatabase } from './database.ts';
import { createDrizzleUsageSink } from './drizzle-usage-sink.ts';
import { postgresArrayLiteral } from './postgres-array-literal.ts';
import { usageEvents } from './schema.ts';
import { usageEventFixture } from './test-utils/usage-event-fixture.ts';

/** Reads the stored events back as UsageEvents, in request id order. */
async function storedEvents(db: ToriiDatabase, requestIds?: string[]): Promise<UsageEvent[]> {
  const rows = await db
    .select()
    .from(usageEvents)
    .where(requestIds ? sql`${usageEvents.requestId} = any(${postgresArrayLiteral(requestIds)}::text[])` : undefined)
    .orderBy(asc(usageEvents.requestId));
  return rows.map((row) => ({ ...row, startedAt: row.startedAt.getTime(), finishedAt: row.finishedAt.getTime() }));
}

const byRequestId = (events: UsageEvent[]) =>
  [...events].sort((left, right) => (left.requestId < right.requestId ? -1 : left.requestId > right.requestId ? 1 : 0));

describe.each(testDatabaseDrivers)('createDrizzleUsageSink on $driver', ({ driver, create }) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await create();
  }, 60_000);
  afterAll(() => database?.drop());

  it('stores every field of every event of a batch', async () => {
    const sink = createDrizzleUsageSink(database.db);
    const events = [
      usageEventFixture({ requestId: 'fields-1' }),
      usageEventFixture({
        requestId: 'fields-2 "quoted", {braced} \\ back',
        clientRequestId: null,
        keyId: null,
        modelGroup: 'NULL',
        provider: null,
        deployment: null,
        upstreamModel: null,
        operation: 'embeddings',
        clientApi: null,
        usageSource: 'none',
        stream: false,
        timeToFirstTokenMs: null,
        costUsd: 0.1 + 0.2,
        status: 502,
        startedAt: Date.UTC(2025, 11, 31, 23, 59, 59, 999),
        finishedAt: Date.UTC(2026, 0, 1, 0, 0, 0, 1),
      }),
      usageEventFixture({ requestId: 'fields-3 ünïcødé 🚀', usageSource: 'estimate', reasoningTokens: 2_000_000 }),
    ];
    await sink.write(events);
    expect(
      await storedEvents(
        database.db,
        events.map((event) => event.requestId),
      ),
    ).toEqual(byRequestId(events));
  });

  it('counts a retried batch, and an event repeated within a batch, once', async () => {
    const sink = createDrizzleUsageSink(database.db);
    const events = Array.from({ length: 50 }, (_, index) => usageEventFixture({ requestId: `retry-${index}` }));
    await sink.write(events);
    // The retry carries different numbers: the first write wins, nothing is double-counted or overwritten.
    await sink.write(events.map((event) => ({ ...event, costUsd: 99 })));
    await sink.write([...events.slice(0, 10), usageEventFixture({ requestId: 'retry-50' }), events[0]!]);
    const stored = await storedEvents(database.db, [...events.map((event) => event.requestId), 'retry-50']);
    expect(stored).toHaveLength(51);
    expect(stored.filter((event) => event.costUsd === 99)).toEqual([]);
  });

  it('does nothing for an empty batch', async () => {
    const [before] = await database.db.select({ rows: count() }).from(usageEvents);
    await createDrizzleUsageSink(database.db).write([]);
    const [after] = await database.db.select({ rows: count() }).from(usageEvents);
    expect(after).toEqual(before);
  });

  it('stores a batch all or nothing', async () => {
    const sink = createDrizzleUsageSink(database.db);
    const events = [
      usageEventFixture({ requestId: 'atomic-1' }),
      // Out of the integer column's range: the database refuses this row.
      usageEventFixture({ requestId: 'atomic-2', inputTokens: 3_000_000_000 }),
    ];
    await expect(sink.write(events)).rejects.toThrow();
    expect(await storedEvents(database.db, ['atomic-1', 'atomic-2'])).toEqual([]);
    await expect(sink.write([usageEventFixture({ requestId: 'atomic-3', costUsd: Number.NaN })])).rejects.toThrow(
      RangeError,
    );
  });

  it('rounds fractional token counts instead of failing the batch', async () => {
    await createDrizzleUsageSink(database.db).write([
      usageEventFixture({ requestId: 'fraction-1', inputTokens: 10.6, outputTokens: 3.2 }),
    ]);
    expect(await storedEvents(database.db, ['fraction-1'])).toMatchObject([{ inputTokens: 11, outputTokens: 3 }]);
  });

  it('writes 5,000 events in one statement with one parameter per column', async () => {
    // A second Drizzle instance over the same database, with a logger that sees every statement sent.
    const statements: Array<{ query: string; parameters: unknown[] }> = [];
    const logger = { logQuery: (query: string, parameters: unknown[]) => statements.push({ query, parameters }) };
    const client = driver === 'postgres' ? postgres(database.url, { max: 1, onnotice: () => {} }) : undefined;
    const db: ToriiDatabase = client ? drizzle({ client, logger }) : withLogger(database, logger);
    try {
      const events = Array.from({ length: 5_000 }, (_, index) =>
        usageEventFixture({ requestId: `bulk-${String(index).padStart(5, '0')}`, inputTokens: index }),
      );
      await createDrizzleUsageSink(db).write(events);
      expect(statements).toHaveLength(1);
      expect(statements[0]!.query).toMatch(
        /^insert into "usage_events" .* select .* from unnest\(.*\) as u\(.*\) on conflict/,
      );
      expect(statements[0]!.parameters).toHaveLength(22);
      const [stored] = await database.db
        .select({ rows: count(), tokens: sql<number>`sum(${usageEvents.inputTokens})::float8`.mapWith(Number) })
        .from(usageEvents)
        .where(sql`${usageEvents.requestId} like 'bulk-%'`);
      expect(stored).toEqual({ rows: 5_000, tokens: (4_999 * 5_000) / 2 });
      const [last] = await database.db.select().from(usageEvents).where(eq(usageEvents.requestId, 'bulk-04999'));
      expect(last?.inputTokens).toBe(4_999);
    } finally {
      await client?.end({ timeout: 5 });
    }
  });
});

/** The PGlite database of `database` again, through a Drizzle instance with `logger`. */
function withLogger(
  database: TestDatabase,
  logger: { logQuery: (query: string, parameters: unknown[]) => void },
): ToriiDatabase {
  // drizzle-orm/pglite's instance keeps its client as `$client`.
  const client = (database.db as unknown as { $client: PGlite }).$client;
  return drizzlePglite({ client, logger });
}
