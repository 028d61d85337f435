import { sql } from 'drizzle-orm';
import type { UsageEvent, UsageSink } from '../usage/usage-event.ts';
import { forEachSliceOfEvents, type UsageSinkTurnOptions } from '../usage/usage-sink-turns.ts';
import type { ToriiDatabase } from './database.ts';

/**
 * One column of the insert: the `usage_events` column, the {@link UsageEvent} field (the JSON key) it comes from, the
 * type `json_to_recordset` reads the field as, and the expression over the field (named `value`) that gives the
 * column's value.
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

/** The columns of `usage_events`, in the order of the insert's column list. */
const usageColumns: readonly UsageColumn[] = [
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

const columnList = usageColumns.map(({ column }) => `"${column}"`).join(', ');
const selectList = usageColumns
  .map(({ field, convert }) => (convert === undefined ? `"${field}"` : convert.replace('value', `"${field}"`)))
  .join(', ');
const recordDefinition = usageColumns.map(({ field, recordType }) => `"${field}" ${recordType}`).join(', ');
const insertHead = sql.raw(`insert into "usage_events" (${columnList}) select ${selectList} from json_to_recordset(`);
const insertTail = sql.raw(`::json) as u(${recordDefinition}) on conflict ("request_id") do nothing`);

/** A `\u0000` escape (after an even number of backslashes: an escape, not escaped text) in JSON text. */
const nulEscape = /(?<!\\)((?:\\\\)*)\\u0000/g;

/**
 * The batch as JSON arrays of at most one slice of events each (see usage-sink-turns.ts), one statement's parameter
 * each, encoded a slice per turn of the event loop. Every number field is checked first (a `RangeError` names the
 * first that is not finite: JSON would turn it into null, which the columns refuse, or into a silent zero), so a bad
 * event anywhere fails the batch before anything is sent. Postgres text cannot hold U+0000: in a recorded name (the
 * names come from the configuration and the key store, so this is defence, not a path a client has) it becomes
 * U+FFFD rather than failing every retry of the batch.
 */
async function batchJsonParts(events: readonly UsageEvent[], turns: UsageSinkTurnOptions): Promise<string[]> {
  const parts: string[] = [];
  await forEachSliceOfEvents(events, turns, (slice) => {
    for (const event of slice) {
      for (const { field, nullable } of numberColumns) {
        const value = event[field];
        if (!Number.isFinite(value) && !(nullable && value == null))
          throw new RangeError(`usage field ${field} is ${String(value)}, not a finite number`);
      }
    }
    const json = JSON.stringify(slice);
    parts.push(json.includes('\\u0000') ? json.replace(nulEscape, '$1\\ufffd') : json);
  });
  return parts;
}

/**
 * The {@link UsageSink} over Postgres through Drizzle, for any driver. A slice of events (50 by default, see `turns`)
 * is ONE statement with ONE parameter, the events as JSON; a batch of several slices is those statements in one
 * transaction:
 *
 * ```sql
 * insert into usage_events (request_id, ...) select "requestId", ..., round("inputTokens")::integer, ...,
 *   to_timestamp("startedAt" / 1000.0), ... from json_to_recordset($1::json) as u("requestId" text, ...)
 * on conflict (request_id) do nothing
 * ```
 *
 * The statement text is the same for every slice (drivers reuse the prepared statement) and no batch can hit the
 * 65,535-parameter limit of the protocol, which a `values ($1, ...), (...)` insert of 22 columns reaches at ~3,000
 * rows. JSON rather than one array literal per column (the previous encoding): `JSON.stringify` writes a slice as one
 * flat string in one native pass, where 22 literals built element by element left about 11,000 number strings
 * (which V8's number-to-string cache keeps alive for a while) and string pieces for the collector at every batch.
 * The encoding runs on the request thread (1.4-1.8 ms for 500 events in one go), so it is done a slice per turn of
 * the event loop (~0.2 ms each) and requests arriving meanwhile are served between slices. A statement per slice
 * rather than one joined parameter: joining 500 events made a ~280 KB string that the driver then flattened, measured
 * and copied into a grown write buffer, three or four fresh large objects (and ~300 page faults) and ~1 ms in one
 * piece per batch; a slice's ~28 KB stays in V8's young generation and the driver's buffer. `on conflict do nothing`
 * makes a retried batch (or an event repeated within a batch) count once. The write is atomic: every event is stored
 * or the call throws.
 *
 * @example
 * ```ts
 * const sink = createDrizzleUsageSink(database.db);
 * await sink.write(events); // safe to call again with the same events after a failure
 * ```
 */
export function createDrizzleUsageSink(db: ToriiDatabase, turns: UsageSinkTurnOptions = {}): UsageSink {
  return {
    async write(events) {
      if (events.length === 0) return;
      const parts = await batchJsonParts(events, turns);
      if (parts.length === 1) {
        await db.execute(sql`${insertHead}${parts[0]!}${insertTail}`);
        return;
      }
      await db.transaction(async (transaction) => {
        for (const part of parts) await transaction.execute(sql`${insertHead}${part}${insertTail}`);
      });
    },
  };
}
