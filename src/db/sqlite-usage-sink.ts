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

/** The insert of `rows` events (the text is the same for every batch of that size, so the executor reuses it). */
function insertOf(rows: number): string {
  return insertHead + new Array<string>(rows).fill(rowPlaceholders).join(', ') + insertTail;
}

/**
 * The {@link UsageSink} over the embedded SQLite database, with the Postgres sink's guarantees
 * (src/db/drizzle-usage-sink.ts): `on conflict ("request_id") do nothing` makes a retried batch (or an event repeated
 * within a batch) count once, and a batch is stored all or nothing. A batch is cut into multi-row inserts of at most
 * `maxBoundParameters` bound parameters each (1,489 events of 22 columns), handed to the executor as one batch, which
 * it runs in one transaction: 5,000 events are 4 statements and one commit.
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
  const rowsPerInsert = Math.max(
    1,
    Math.floor((options.maxBoundParameters ?? sqliteMaxBoundParameters) / usageColumns.length),
  );
  const fullInsert = insertOf(rowsPerInsert);
  return {
    async write(events) {
      if (events.length === 0) return;
      const values: unknown[] = [];
      await forEachSliceOfEvents(events, options, (slice) => {
        for (const event of slice) for (const [, read] of usageColumns) values.push(read(event));
      });
      const statements: SqliteRawStatement[] = [];
      for (let start = 0; start < events.length; start += rowsPerInsert) {
        const end = Math.min(start + rowsPerInsert, events.length);
        statements.push({
          sql: end - start === rowsPerInsert ? fullInsert : insertOf(end - start),
          params:
            end - start === events.length
              ? values
              : values.slice(start * usageColumns.length, end * usageColumns.length),
          method: 'run',
        });
      }
      await executor.batch(statements);
    },
  };
}
