import { asc, count, eq, inArray, like, sql } from 'drizzle-orm';
import type { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUsageSinkDrivers, type TestDatabase, type TestStores } from '../../tests/services/test-database.ts';
import type { UsageEvent } from '../usage/usage-event.ts';
import type { ToriiDatabase } from './database.ts';
import { createDrizzleUsageSink, usageColumns, usageRow } from './drizzle-usage-sink.ts';
import { postgresArrayLiteral } from './postgres-array-literal.ts';
import { usageEvents } from './schema.ts';
import { sqliteUsageEvents } from './sqlite-schema.ts';
import { createSqliteUsageSink, sqliteInsertSizes, sqliteMaxBoundParameters } from './sqlite-usage-sink.ts';
import { usageEventFixture } from './test-utils/usage-event-fixture.ts';

/** Reads the stored events back as UsageEvents, in request id order. */
async function storedEvents(database: TestStores['database'], requestIds?: string[]): Promise<UsageEvent[]> {
  const rows =
    database.kind === 'sqlite'
      ? await database.db
          .select()
          .from(sqliteUsageEvents)
          .where(requestIds ? inArray(sqliteUsageEvents.requestId, requestIds) : undefined)
          .orderBy(asc(sqliteUsageEvents.requestId))
      : await database.db
          .select()
          .from(usageEvents)
          .where(
            requestIds ? sql`${usageEvents.requestId} = any(${postgresArrayLiteral(requestIds)}::text[])` : undefined,
          )
          .orderBy(asc(usageEvents.requestId));
  return rows.map((row) => ({ ...row, startedAt: row.startedAt.getTime(), finishedAt: row.finishedAt.getTime() }));
}

/** How many rows `usage_events` holds, and the sum of their input tokens, of the request ids starting with `prefix`. */
async function ledgerTotals(
  database: TestStores['database'],
  prefix: string,
): Promise<{ rows: number; tokens: number }> {
  const [totals] =
    database.kind === 'sqlite'
      ? await database.db
          .select({ rows: count(), tokens: sql<number>`sum(${sqliteUsageEvents.inputTokens})`.mapWith(Number) })
          .from(sqliteUsageEvents)
          .where(like(sqliteUsageEvents.requestId, `${prefix}%`))
      : await database.db
          .select({ rows: count(), tokens: sql<number>`sum(${usageEvents.inputTokens})::float8`.mapWith(Number) })
          .from(usageEvents)
          .where(like(usageEvents.requestId, `${prefix}%`));
  return { rows: totals?.rows ?? 0, tokens: totals?.tokens ?? 0 };
}

const byRequestId = (events: UsageEvent[]) =>
  [...events].sort((left, right) => (left.requestId < right.requestId ? -1 : left.requestId > right.requestId ? 1 : 0));

// The UsageSink conformance cases, on the Drizzle sink over Postgres and PGlite and the SQLite sink
// (./sqlite-usage-sink.ts).
describe.each(testUsageSinkDrivers)('usage sink on $driver', ({ driver, create }) => {
  let stores: TestStores;
  let database: TestStores['database'];
  beforeAll(async () => {
    stores = await create();
    database = stores.database;
  }, 60_000);
  afterAll(() => stores?.drop());

  it('stores every field of every event of a batch', async () => {
    const sink = stores.usageSink();
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
        servedModelGroup: null,
        attempts: null,
        usageSource: 'none',
        stream: false,
        timeToFirstTokenMs: null,
        costUsd: 0.1 + 0.2,
        status: 502,
        startedAt: Date.UTC(2025, 11, 31, 23, 59, 59, 999),
        finishedAt: Date.UTC(2026, 0, 1, 0, 0, 0, 1),
      }),
      usageEventFixture({
        requestId: 'fields-3 ünïcødé 🚀',
        usageSource: 'estimate',
        reasoningTokens: 2_000_000,
        servedModelGroup: 'backup',
        attempts: 3,
      }),
    ];
    await sink.write(events);
    expect(
      await storedEvents(
        database,
        events.map((event) => event.requestId),
      ),
    ).toEqual(byRequestId(events));
  });

  it('counts a retried batch, and an event repeated within a batch, once', async () => {
    const sink = stores.usageSink();
    const events = Array.from({ length: 50 }, (_, index) => usageEventFixture({ requestId: `retry-${index}` }));
    await sink.write(events);
    // The retry carries different numbers: the first write wins, nothing is double-counted or overwritten.
    await sink.write(events.map((event) => ({ ...event, costUsd: 99 })));
    await sink.write([...events.slice(0, 10), usageEventFixture({ requestId: 'retry-50' }), events[0]!]);
    const stored = await storedEvents(database, [...events.map((event) => event.requestId), 'retry-50']);
    expect(stored).toHaveLength(51);
    expect(stored.filter((event) => event.costUsd === 99)).toEqual([]);
  });

  it('does nothing for an empty batch', async () => {
    const before = await ledgerTotals(database, '');
    await stores.usageSink().write([]);
    expect(await ledgerTotals(database, '')).toEqual(before);
  });

  it('stores a batch all or nothing', async () => {
    const sink = stores.usageSink();
    const events = [
      usageEventFixture({ requestId: 'atomic-1' }),
      // A row the database refuses: out of Postgres's integer range; SQLite's integers are 64-bit and take that
      // count (a difference, not a loss), so on SQLite the row breaks NOT NULL instead.
      driver === 'sqlite'
        ? usageEventFixture({ requestId: 'atomic-2', operation: null as unknown as string })
        : usageEventFixture({ requestId: 'atomic-2', inputTokens: 3_000_000_000 }),
    ];
    await expect(sink.write(events)).rejects.toThrow();
    expect(await storedEvents(database, ['atomic-1', 'atomic-2'])).toEqual([]);
    await expect(sink.write([usageEventFixture({ requestId: 'atomic-3', costUsd: Number.NaN })])).rejects.toThrow(
      RangeError,
    );
  });

  it('stores a name with U+0000 (which Postgres text cannot hold) without failing the batch', async () => {
    // Names come from the configuration and the key store; still, one such event must not block every batch.
    const events = [
      usageEventFixture({ requestId: 'nul-1', modelGroup: 'a\u0000b' }),
      // Text that only looks like an escape once encoded (a backslash, then "u0000") is stored as it is.
      usageEventFixture({ requestId: 'nul-2', modelGroup: 'c\\u0000d "q"' }),
    ];
    await stores.usageSink().write(events);
    const stored = await storedEvents(database, ['nul-1', 'nul-2']);
    expect(stored.map((event) => event.modelGroup)).toEqual([
      driver === 'sqlite' ? 'a\u0000b' : 'a\ufffdb',
      'c\\u0000d "q"',
    ]);
  });

  it('rounds fractional token counts instead of failing the batch', async () => {
    await stores
      .usageSink()
      .write([usageEventFixture({ requestId: 'fraction-1', inputTokens: 10.6, outputTokens: 3.2 })]);
    expect(await storedEvents(database, ['fraction-1'])).toMatchObject([{ inputTokens: 11, outputTokens: 3 }]);
  });

  it('encodes a batch a slice per turn of the event loop, and still stores it whole or not at all', async () => {
    let turns = 0;
    const sink = stores.usageSink({
      eventsPerTurn: 10,
      nextTurn: async () => {
        turns += 1;
        await new Promise((resolve) => setTimeout(resolve, 0));
      },
    });
    // 45 events: five slices, the last one short; every field of every slice arrives, in the slices' joins too.
    const events = Array.from({ length: 45 }, (_, index) =>
      usageEventFixture({
        requestId: `turns-${String(index).padStart(2, '0')}`,
        inputTokens: index,
        modelGroup: index % 10 === 9 ? `last of slice "${index}", \\ {}` : null,
        costUsd: index / 7,
      }),
    );
    await sink.write(events);
    expect(turns).toBe(4);
    expect(
      await storedEvents(
        database,
        events.map((event) => event.requestId),
      ),
    ).toEqual(byRequestId(events));

    // A bad number in the last slice fails the batch before any of it is stored.
    turns = 0;
    const failing = [
      ...Array.from({ length: 25 }, (_, index) => usageEventFixture({ requestId: `turns-bad-${index}` })),
      usageEventFixture({ requestId: 'turns-bad-last', latencyMs: Number.POSITIVE_INFINITY }),
    ];
    await expect(sink.write(failing)).rejects.toThrow(RangeError);
    expect(turns).toBe(2);
    expect(await ledgerTotals(database, 'turns-bad-')).toEqual({ rows: 0, tokens: 0 });
  });

  it.runIf(driver === 'postgres' || driver === 'pglite')(
    'writes 5,000 events as one statement of one parameter',
    async () => {
      if (database.kind === 'sqlite') return;
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
        // Encoded in 100 slices of 50 (the default), sent as one insert whose one parameter holds every row.
        expect(statements).toHaveLength(1);
        const [statement] = statements;
        expect(statement?.query).toMatch(
          /^insert into "usage_events" .* select .* from jsonb_array_elements\(\$1::jsonb\) as events\(event\) on conflict/,
        );
        expect(statement?.parameters).toHaveLength(1);
        const rows = JSON.parse(statement?.parameters[0] as string) as unknown[][];
        expect(rows).toHaveLength(5_000);
        expect(rows[4_999]).toEqual(usageRow(events[4_999]!));
        expect(await ledgerTotals(database, 'bulk-')).toEqual({ rows: 5_000, tokens: (4_999 * 5_000) / 2 });
        const [last] = await database.db.select().from(usageEvents).where(eq(usageEvents.requestId, 'bulk-04999'));
        expect(last?.inputTokens).toBe(4_999);
      } finally {
        await client?.end({ timeout: 5 });
      }
    },
  );

  it.runIf(driver !== 'sqlite')('stores none of a batch when the database refuses its last row', async () => {
    if (database.kind === 'sqlite') return;
    // Finite, so it passes the checks before sending, but out of the integer column's range: Postgres refuses the
    // last row of the last slice after the first three slices were encoded.
    const events = Array.from({ length: 40 }, (_, index) =>
      usageEventFixture({ requestId: `atomic-${String(index).padStart(2, '0')}`, status: index === 39 ? 1e12 : 200 }),
    );
    const sink = createDrizzleUsageSink(database.db, { eventsPerTurn: 10 });
    await expect(sink.write(events)).rejects.toThrow();
    expect(await ledgerTotals(database, 'atomic-')).toEqual({ rows: 0, tokens: 0 });
    // The same batch without the bad event is stored whole afterwards.
    await sink.write(events.slice(0, 39));
    expect((await ledgerTotals(database, 'atomic-')).rows).toBe(39);
  });

  // SQLite binds each value as its own parameter: a batch is cut into inserts within the bound-parameter limit, all
  // sent as one batch the executor runs in one transaction.
  it.runIf(driver === 'sqlite')(
    'writes 5,000 events in inserts within the bound-parameter limit, in one transaction',
    async () => {
      if (database.kind !== 'sqlite') return;
      const { executor, batches } = database.recording();
      const events = Array.from({ length: 5_000 }, (_, index) =>
        usageEventFixture({ requestId: `bulk-${String(index).padStart(5, '0')}`, inputTokens: index }),
      );
      await createSqliteUsageSink(executor).write(events);
      expect(batches).toHaveLength(1);
      const statements = batches[0]!;
      // 24 columns: 1,365 rows fit the limit, so inserts of 1,024 rows, the rest in powers of two.
      expect(statements.map((statement) => statement.params.length / 24)).toEqual([
        1024, 1024, 1024, 1024, 512, 256, 128, 8,
      ]);
      for (const statement of statements) {
        // (Checked as booleans: a failure would print the statement's 32,000 placeholders.)
        expect(statement.sql.startsWith('insert into "usage_events" ')).toBe(true);
        expect(statement.sql.endsWith(' on conflict ("request_id") do nothing')).toBe(true);
        expect(statement.params.length).toBeLessThanOrEqual(sqliteMaxBoundParameters);
      }
      expect(await ledgerTotals(database, 'bulk-')).toEqual({ rows: 5_000, tokens: (4_999 * 5_000) / 2 });
      const [last] = await database.db
        .select()
        .from(sqliteUsageEvents)
        .where(eq(sqliteUsageEvents.requestId, 'bulk-04999'));
      expect(last?.inputTokens).toBe(4_999);

      // A smaller limit cuts finer, and a failing row in the last insert undoes the inserts before it.
      const failing = [
        ...Array.from({ length: 30 }, (_, index) => usageEventFixture({ requestId: `chunked-${index}` })),
        usageEventFixture({ requestId: 'chunked-bad', operation: null as unknown as string }),
      ];
      await expect(createSqliteUsageSink(executor, { maxBoundParameters: 24 * 10 }).write(failing)).rejects.toThrow(
        /NOT NULL/,
      );
      // 31 events, at most 10 rows an insert: 8, 8, 8, 4, 2, 1.
      expect(batches.at(-1)?.map((statement) => statement.params.length / 24)).toEqual([8, 8, 8, 4, 2, 1]);
      expect(await ledgerTotals(database, 'chunked-')).toEqual({ rows: 0, tokens: 0 });
    },
  );
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

describe('usageRow', () => {
  it("puts every field at its column's index", () => {
    const event = usageEventFixture();
    const row = usageRow(event);
    expect(row).toHaveLength(usageColumns.length);
    usageColumns.forEach(({ field }, index) => expect([field, row[index]]).toEqual([field, event[field]]));
    // A field absent from an event spilled by an older version is null in JSON.
    const { clientApi: _clientApi, ...older } = event;
    expect(JSON.parse(JSON.stringify(usageRow(older)))).toContain(null);
  });
});

describe('sqliteInsertSizes', () => {
  it('cuts any batch into whole chunks and powers of two, so a dozen statement texts serve every batch size', () => {
    expect(sqliteInsertSizes(500, 1024)).toEqual([256, 128, 64, 32, 16, 4]);
    expect(sqliteInsertSizes(1, 1024)).toEqual([1]);
    expect(sqliteInsertSizes(2_049, 1024)).toEqual([1024, 1024, 1]);
    expect(sqliteInsertSizes(0, 8)).toEqual([]);
    const texts = new Set<number>();
    for (let rows = 1; rows <= 3_000; rows++) {
      const sizes = sqliteInsertSizes(rows, 1024);
      expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(rows);
      for (const size of sizes) texts.add(size);
    }
    expect(texts.size).toBe(11);
  });
});
