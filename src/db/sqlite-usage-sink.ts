import type { UsageEvent, UsageSink } from '../usage/usage-event.ts';
import { forEachSliceOfEvents, type UsageSinkTurnOptions } from '../usage/usage-sink-turns.ts';
import type { SqliteRawStatement, SqliteStatementBatcher } from './sqlite-database.ts';

/**
 * SQLite's default limit of bound parameters in one statement (`SQLITE_MAX_VARIABLE_NUMBER`, 32,766 since SQLite
 * 3.32; Node's and Deno's builds keep it).
 */
export const sqliteMaxBoundParameters = 32_766;

/** Options of {@link createSqliteUsageSink}; the values are bound a slice of events per turn (usage-sink-turns.ts). */
export interface SqliteUsageSinkOptions extends UsageSinkTurnOptions {
  /** The most bound parameters one insert may carry (default {@link sqliteMaxBoundParameters}). */
  maxBoundParameters?: number;
}

/** Whole numbers for integer columns: an estimate with a fraction must not fail the whole batch. */
const whole = (value: number): number => Math.round(value);

/**
 * A number column's value. SQLite would store NaN as NULL (and refuse the row for a NOT NULL column) and infinities
 * as they are; Postgres's sink refuses both before sending anything, with a RangeError, and so does this one.
 */
function finite(value: number, field: string): number {
  if (!Number.isFinite(value)) throw new RangeError(`usage field ${field} is ${value}, not a finite number`);
  return value;
}

/** The columns of `usage_events` (./sqlite-schema.ts) and how each is read from an event, in insert order. */
const usageColumns: ReadonlyArray<readonly [name: string, read: (event: UsageEvent) => string | number | null]> = [
  ['request_id', (event) => event.requestId],
  ['client_request_id', (event) => event.clientRequestId ?? null],
  ['key_id', (event) => event.keyId],
  ['model_group', (event) => event.modelGroup],
  ['provider', (event) => event.provider],
  ['deployment', (event) => event.deployment],
  ['upstream_model', (event) => event.upstreamModel],
  ['operation', (event) => event.operation],
  ['client_api', (event) => event.clientApi ?? null],
  ['served_model_group', (event) => event.servedModelGroup ?? null],
  ['attempts', (event) => (event.attempts == null ? null : whole(finite(event.attempts, 'attempts')))],
  ['input_tokens', (event) => whole(finite(event.inputTokens, 'inputTokens'))],
  ['output_tokens', (event) => whole(finite(event.outputTokens, 'outputTokens'))],
  ['cached_input_tokens', (event) => whole(finite(event.cachedInputTokens, 'cachedInputTokens'))],
  ['reasoning_tokens', (event) => whole(finite(event.reasoningTokens, 'reasoningTokens'))],
  ['usage_source', (event) => event.usageSource],
  ['cost_usd', (event) => finite(event.costUsd, 'costUsd')],
  ['status', (event) => whole(finite(event.status, 'status'))],
  ['stream', (event) => (event.stream ? 1 : 0)],
  ['latency_ms', (event) => finite(event.latencyMs, 'latencyMs')],
  [
    'time_to_first_token_ms',
    (event) => (event.timeToFirstTokenMs === null ? null : finite(event.timeToFirstTokenMs, 'timeToFirstTokenMs')),
  ],
  ['overhead_ms', (event) => finite(event.overheadMs, 'overheadMs')],
  // Times are stored as epoch ms, which is what the events carry.
  ['started_at', (event) => finite(event.startedAt, 'startedAt')],
  ['finished_at', (event) => finite(event.finishedAt, 'finishedAt')],
];

const insertHead = `insert into "usage_events" (${usageColumns.map(([name]) => `"${name}"`).join(', ')}) values `;
const rowPlaceholders = `(${usageColumns.map(() => '?').join(', ')})`;
const insertTail = ' on conflict ("request_id") do nothing';

/**
 * The inserts a batch is cut into, as row counts: whole chunks of `largest` rows, then the rest as powers of two, largest
 * first (500 rows: 256, 128, 64, 32, 16, 4). So the executor only ever sees a dozen statement texts, one per power of
 * two, whatever sizes the batches have: it keeps prepared statements by text, and a batch every 100 ms has a different
 * size each time; a statement per size meant preparing (and caching, up to 200 of them) a new insert of up to 12,000
 * placeholders for most batches, which measured as +190 MB of RSS and a fifth of the embedded shape's throughput.
 */
export function sqliteInsertSizes(rows: number, largest: number): number[] {
  const sizes: number[] = [];
  let left = rows;
  while (left >= largest) {
    sizes.push(largest);
    left -= largest;
  }
  for (let size = largest >> 1; size >= 1; size >>= 1) {
    if (left >= size) {
      sizes.push(size);
      left -= size;
    }
  }
  return sizes;
}

/** The largest power of two no greater than `value` (at least 1). */
function powerOfTwoAtMost(value: number): number {
  let power = 1;
  while (power * 2 <= value) power *= 2;
  return power;
}

/**
 * The {@link UsageSink} over the embedded SQLite database, with the Postgres sink's guarantees
 * (src/db/drizzle-usage-sink.ts): `on conflict ("request_id") do nothing` makes a retried batch (or an event repeated
 * within a batch) count once, and a batch is stored all or nothing. A batch is cut into multi-row inserts of a power of
 * two rows each (see {@link sqliteInsertSizes}), at most `maxBoundParameters` bound parameters each (1,024 events of
 * 24 columns), handed to the executor as one batch, which it runs in one transaction.
 *
 * It writes through the executor (`database.executor` of adapters/shared/sqlite-database-open.ts) rather than the
 * Drizzle database: the statements are plain text and one flat array of values, built in a loop, so a batch costs
 * the request thread next to nothing (Drizzle's builder took ~40 ms per 500 events).
 *
 * @example
 * ```ts
 * const sink = createSqliteUsageSink(database.executor);
 * await sink.write(events); // safe to call again with the same events after a failure
 * ```
 */
export function createSqliteUsageSink(
  executor: SqliteStatementBatcher,
  options: SqliteUsageSinkOptions = {},
): UsageSink {
  const largest = powerOfTwoAtMost(
    Math.max(1, Math.floor((options.maxBoundParameters ?? sqliteMaxBoundParameters) / usageColumns.length)),
  );
  // The insert text per row count, built once (500 rows of placeholders are ~25 KB of text).
  const inserts = new Map<number, string>();
  const insertOf = (rows: number): string => {
    let text = inserts.get(rows);
    if (text === undefined) {
      text = insertHead + new Array<string>(rows).fill(rowPlaceholders).join(', ') + insertTail;
      inserts.set(rows, text);
    }
    return text;
  };
  return {
    async write(events) {
      if (events.length === 0) return;
      const values: unknown[] = [];
      await forEachSliceOfEvents(events, options, (slice) => {
        for (const event of slice) for (const [, read] of usageColumns) values.push(read(event));
      });
      const statements: SqliteRawStatement[] = [];
      let start = 0;
      for (const rows of sqliteInsertSizes(events.length, largest)) {
        statements.push({
          sql: insertOf(rows),
          params:
            rows === events.length
              ? values
              : values.slice(start * usageColumns.length, (start + rows) * usageColumns.length),
          method: 'run',
        });
        start += rows;
      }
      await executor.batch(statements);
    },
  };
}
