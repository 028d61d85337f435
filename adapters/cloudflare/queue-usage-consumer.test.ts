import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDrizzleUsageSink } from '../../src/db/drizzle-usage-sink.ts';
import type { GatewayLogger } from '../../src/services.ts';
import { testUsageEvent } from '../../src/usage/usage-queue-test-events.ts';
import { openPostgresDatabase, type OpenPostgresDatabase } from '../shared/database-open.ts';
import { createEmptyTestDatabase, createTestDatabase, type TestDatabase } from '../../tests/services/test-database.ts';
import { consumeUsageBatch, usageRetryDelaySeconds, type WorkersQueueMessage } from './queue-usage-consumer.ts';
import { packUsageMessages } from './queue-usage-sink.ts';

/** A delivered message as the platform hands it to `queue()`, keeping what the consumer decided. */
function deliveredMessage(body: unknown, attempts = 1) {
  const outcome: { acked: boolean; retried: { delaySeconds?: number } | undefined } = {
    acked: false,
    retried: undefined,
  };
  const message: WorkersQueueMessage = {
    id: crypto.randomUUID(),
    body: JSON.parse(JSON.stringify(body)),
    attempts,
    ack: () => (outcome.acked = true),
    retry: (options) => (outcome.retried = options ?? {}),
  };
  return { message, outcome };
}

const quietLogger: GatewayLogger = { info() {}, warn() {}, error() {} };

async function ledgerCount(database: OpenPostgresDatabase, prefix: string): Promise<Map<string, number>> {
  const rows = (await database.db.execute(
    sql`select request_id, count(*)::int as rows from usage_events where starts_with(request_id, ${prefix}) group by request_id`,
  )) as unknown as { request_id: string; rows: number }[];
  return new Map(rows.map((row) => [row.request_id, row.rows]));
}

describe('consumeUsageBatch (the ledger’s Queue consumer) on PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  }, 60_000);
  afterAll(() => database?.drop());

  it('writes every event of a batch in one go, acknowledges each message, and counts a redelivered batch once', async () => {
    const events = Array.from({ length: 250 }, (_, index) => ({
      ...testUsageEvent(index),
      requestId: `consumer-once-${index}`,
    }));
    const bodies = packUsageMessages(events).map((message) => message.body);
    expect(bodies.length).toBeGreaterThan(1);
    for (let delivery = 1; delivery <= 2; delivery++) {
      const delivered = bodies.map((body) => deliveredMessage(body, delivery));
      const result = await consumeUsageBatch(
        { queue: 'torii-usage', messages: delivered.map(({ message }) => message) },
        createDrizzleUsageSink(database.db),
        quietLogger,
      );
      expect(result).toEqual({ written: events.length, retried: 0, malformed: 0 });
      expect(delivered.map(({ outcome }) => outcome)).toEqual(
        delivered.map(() => ({ acked: true, retried: undefined })),
      );
    }
    const counts = await ledgerCount(database, 'consumer-once-');
    expect(counts.size).toBe(events.length);
    expect([...counts.values()].every((rows) => rows === 1)).toBe(true);
  });

  it('leaves a message it cannot read for the dead-letter queue and still writes the others', async () => {
    const good = deliveredMessage(
      packUsageMessages([{ ...testUsageEvent(1), requestId: 'consumer-mixed-1' }])[0]?.body,
    );
    const foreign = deliveredMessage({ hello: 'world' });
    const result = await consumeUsageBatch(
      { queue: 'torii-usage', messages: [good.message, foreign.message] },
      createDrizzleUsageSink(database.db),
      quietLogger,
    );
    expect(result).toEqual({ written: 1, retried: 0, malformed: 1 });
    expect(good.outcome).toEqual({ acked: true, retried: undefined });
    expect(foreign.outcome).toEqual({ acked: false, retried: {} });
    expect(await ledgerCount(database, 'consumer-mixed-')).toEqual(new Map([['consumer-mixed-1', 1]]));
  });

  it('retries every message with a growing delay when the database refuses the batch', async () => {
    // A database without the ledger's table: the insert fails as it would with Postgres down.
    const empty = await createEmptyTestDatabase();
    const unmigrated = await openPostgresDatabase({ DATABASE_URL: empty.url }, { migrate: false });
    try {
      const events = [1, 2].map((index) => ({ ...testUsageEvent(index), requestId: `consumer-retry-${index}` }));
      const [body] = packUsageMessages(events).map((message) => message.body);
      const first = deliveredMessage(body, 1);
      const fourth = deliveredMessage(body, 4);
      const result = await consumeUsageBatch(
        { queue: 'torii-usage', messages: [first.message, fourth.message] },
        createDrizzleUsageSink(unmigrated.db),
        quietLogger,
      );
      expect(result).toEqual({ written: 0, retried: 2, malformed: 0 });
      expect(first.outcome).toEqual({ acked: false, retried: { delaySeconds: 5 } });
      expect(fourth.outcome).toEqual({ acked: false, retried: { delaySeconds: 40 } });
    } finally {
      await unmigrated.close();
      await empty.drop();
    }
  });

  it('waits 5 s doubling per attempt, at most 5 minutes', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map(usageRetryDelaySeconds)).toEqual([5, 10, 20, 40, 80, 160, 300, 300]);
  });
});
