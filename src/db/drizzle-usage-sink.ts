import { sql } from 'drizzle-orm';
import type { UsageEvent, UsageSink } from '../usage/usage-event.ts';
import { forEachSliceOfEvents, type UsageSinkTurnOptions } from '../usage/usage-sink-turns.ts';
import type { ToriiDatabase } from './database.ts';

/**
 * One column of the insert: the `usage_events` column, the {@link UsageEvent} field it comes from (its value sits at
 * the column's index in the event's JSON row), the type its JSON text is cast to, and the expression over the cast
 * value (named `value`) that gives the column's value.
 */
interface UsageColumn {
  column: string;
  field: keyof UsageEvent;
  recordType: 'text' | 'double precision' | 'boolean';
  convert?: string;
  /** A number column that may be null (the others must be finite numbers). */
  nullable?: true;
}

/** Whole numbers for integer columns: an estimate with a fraction must not fail the whole batch. */
const wholeNumber = 'round(value)::integer';

/** The columns of `usage_events`, in the order of the insert's column list and of {@link usageRow}. */
export const usageColumns: readonly UsageColumn[] = [
  { column: 'request_id', field: 'requestId', recordType: 'text' },
  { column: 'client_request_id', field: 'clientRequestId', recordType: 'text' },
  { column: 'key_id', field: 'keyId', recordType: 'text' },
  { column: 'model_group', field: 'modelGroup', recordType: 'text' },
  { column: 'provider', field: 'provider', recordType: 'text' },
  { column: 'deployment', field: 'deployment', recordType: 'text' },
  { column: 'upstream_model', field: 'upstreamModel', recordType: 'text' },
  { column: 'operation', field: 'operation', recordType: 'text' },
  { column: 'client_api', field: 'clientApi', recordType: 'text' },
  { column: 'served_model_group', field: 'servedModelGroup', recordType: 'text' },
  { column: 'attempts', field: 'attempts', recordType: 'double precision', convert: wholeNumber, nullable: true },
  { column: 'input_tokens', field: 'inputTokens', recordType: 'double precision', convert: wholeNumber },
  { column: 'output_tokens', field: 'outputTokens', recordType: 'double precision', convert: wholeNumber },
  { column: 'cached_input_tokens', field: 'cachedInputTokens', recordType: 'double precision', convert: wholeNumber },
  { column: 'reasoning_tokens', field: 'reasoningTokens', recordType: 'double precision', convert: wholeNumber },
  { column: 'usage_source', field: 'usageSource', recordType: 'text' },
  { column: 'cost_usd', field: 'costUsd', recordType: 'double precision' },
  { column: 'status', field: 'status', recordType: 'double precision', convert: wholeNumber },
  { column: 'stream', field: 'stream', recordType: 'boolean' },
  { column: 'latency_ms', field: 'latencyMs', recordType: 'double precision' },
  { column: 'time_to_first_token_ms', field: 'timeToFirstTokenMs', recordType: 'double precision', nullable: true },
  { column: 'overhead_ms', field: 'overheadMs', recordType: 'double precision' },
  // Times travel as epoch milliseconds and become timestamps in Postgres: formatting two ISO strings per event in
  // JavaScript cost more than the rest of the row's encoding.
  { column: 'started_at', field: 'startedAt', recordType: 'double precision', convert: 'to_timestamp(value / 1000.0)' },
  {
    column: 'finished_at',
    field: 'finishedAt',
    recordType: 'double precision',
    convert: 'to_timestamp(value / 1000.0)',
  },
];

/** The number columns, checked before a batch is sent (JSON would turn NaN or Infinity into null). */
const numberColumns = usageColumns.filter(({ recordType }) => recordType === 'double precision');

/**
 * An event as its JSON row: the values in {@link usageColumns} order, no keys (an object per event spent more than
 * half of every row's bytes on the 24 keys). Written out rather than mapped over the columns: it runs per event.
 * `undefined` (a field absent in an older spilled event) becomes JSON null.
 */
export function usageRow(event: UsageEvent): unknown[] {
  return [
    event.requestId,
    event.clientRequestId,
    event.keyId,
    event.modelGroup,
    event.provider,
    event.deployment,
    event.upstreamModel,
    event.operation,
    event.clientApi,
    event.servedModelGroup,
    event.attempts,
    event.inputTokens,
    event.outputTokens,
    event.cachedInputTokens,
    event.reasoningTokens,
    event.usageSource,
    event.costUsd,
    event.status,
    event.stream,
    event.latencyMs,
    event.timeToFirstTokenMs,
    event.overheadMs,
    event.startedAt,
    event.finishedAt,
  ];
}

const castOf = { text: '', 'double precision': '::double precision', boolean: '::boolean' } as const;
const columnList = usageColumns.map(({ column }) => `"${column}"`).join(', ');
const selectList = usageColumns
  .map(({ recordType, convert }, index) => {
    const value = `(event->>${index})${castOf[recordType]}`;
    return convert === undefined ? value : convert.replace('value', value);
  })
  .join(', ');
const insertHeadText = `insert into "usage_events" (${columnList}) select ${selectList} from jsonb_array_elements(`;
const insertTailText = `::jsonb) as events(event) on conflict ("request_id") do nothing`;
const insertHead = sql.raw(insertHeadText);
const insertTail = sql.raw(insertTailText);

/**
 * The ledger's insert as SQL text with one parameter, `$1`: the batch's JSON array of rows ({@link usageBatchJson}).
 * For a driver that runs it without Drizzle (the Node server's usage thread); {@link createDrizzleUsageSink} runs the
 * same statement.
 */
export const usageInsertStatement = `${insertHeadText}$1${insertTailText}`;

/** A `\u0000` escape (after an even number of backslashes: an escape, not escaped text) in JSON text. */
const nulEscape = /(?<!\\)((?:\\\\)*)\\u0000/g;

/**
 * The batch as one JSON array of rows ({@link usageRow}), encoded a slice per turn of the event loop (see
 * usage-sink-turns.ts) and joined once. Every number field is checked first (a `RangeError` names the first that is
 * not finite: JSON would turn it into null, which the columns refuse, or into a silent zero), so a bad event anywhere
 * fails the batch before anything is sent. Postgres text cannot hold U+0000: in a recorded name (the names come from
 * the configuration and the key store, so this is defence, not a path a client has) it becomes U+FFFD rather than
 * failing every retry of the batch.
 */
export async function usageBatchJson(events: readonly UsageEvent[], turns: UsageSinkTurnOptions = {}): Promise<string> {
  const parts: string[] = [];
  await forEachSliceOfEvents(events, turns, (slice) => {
    const rows: unknown[][] = [];
    for (const event of slice) {
      for (const { field, nullable } of numberColumns) {
        const value = event[field];
        if (!Number.isFinite(value) && !(nullable && value == null))
          throw new RangeError(`usage field ${field} is ${String(value)}, not a finite number`);
      }
      rows.push(usageRow(event));
    }
    const json = JSON.stringify(rows);
    parts.push(json.includes('\\u0000') ? json.replace(nulEscape, '$1\\ufffd') : json);
  });
  // Each part is `[[...],...]`: the rows of all parts in one array.
  return parts.length === 1 ? parts[0]! : `[${parts.map((part) => part.slice(1, -1)).join(',')}]`;
}

/**
 * The {@link UsageSink} over Postgres through Drizzle, for any driver. A batch is ONE statement with ONE parameter,
 * its events as a JSON array of rows (values in column order, see {@link usageRow}):
 *
 * ```sql
 * insert into usage_events (request_id, ...) select (event->>0), ..., round((event->>11)::double precision)::integer,
 *   ..., to_timestamp((event->>22)::double precision / 1000.0), ... from jsonb_array_elements($1::jsonb) as events(event)
 * on conflict (request_id) do nothing
 * ```
 *
 * The statement text is the same for every batch (postgres-js still sends it unnamed, parsed and described each time:
 * a named statement would break behind PgBouncer in transaction mode), no batch can hit the 65,535-parameter limit of
 * the protocol, and one statement is atomic without a transaction. Why one statement per
 * batch: a statement costs far more than its bytes. Measured with postgres.js on this project's bench host, writing
 * 500 events as ten statements of 50 in a transaction took 14-23 us of the request thread's CPU per event, as one
 * statement 7 us (the driver's per-query objects, promises and buffer copies, and two more round trips, each a
 * loopback socket write whose TCP work is charged to the writer). Keyless rows halve the bytes (about 280 instead of
 * 600 per event), and with them the encoding, the copies into the driver's buffer and the socket writes.
 * `JSON.stringify` still runs a slice per turn of the event loop (50 events, ~0.1 ms), so requests arriving meanwhile
 * are served between slices; the join and the driver's copy of the ~140 KB text of 500 events are one memcpy-bound
 * step. `on conflict do nothing` makes a retried batch (or an event repeated within a batch) count once. The write is
 * atomic: every event is stored or the call throws.
 *
 * @example
 * ```ts
 * const sink = createDrizzleUsageSink(database.db);
 * await sink.write(events); // safe to call again with the same events after a failure
 * ```
 */
export function createDrizzleUsageSink(db: ToriiDatabase, turns: UsageSinkTurnOptions = {}): UsageSink {
  return createPostgresJsonUsageSink((json) => db.execute(sql`${insertHead}${json}${insertTail}`), turns);
}

/**
 * The {@link UsageSink} of {@link createDrizzleUsageSink} over any way to run {@link usageInsertStatement}: `insert`
 * gets the batch's JSON ({@link usageBatchJson}, encoded here a slice per turn) as the statement's `$1` and settles
 * when the statement has committed or failed.
 *
 * @example
 * ```ts
 * const sink = createPostgresJsonUsageSink((json) => client.unsafe(usageInsertStatement, [json]));
 * await sink.write(events);
 * ```
 */
export function createPostgresJsonUsageSink(
  insert: (batchJson: string) => Promise<unknown>,
  turns: UsageSinkTurnOptions = {},
): UsageSink {
  return {
    async write(events) {
      if (events.length === 0) return;
      await insert(await usageBatchJson(events, turns));
    },
  };
}
