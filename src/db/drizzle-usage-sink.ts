import { sql } from 'drizzle-orm';
import type { UsageEvent, UsageSink } from '../usage/usage-event.ts';
import type { ToriiDatabase } from './database.ts';
import { postgresArrayLiteralOf, type ArrayElement } from './postgres-array-literal.ts';

/**
 * One column of the insert: its name, its Postgres array type, how to read it from an event, and (for times) the
 * expression that turns the array element into the column's value.
 */
interface UsageColumn {
  name: string;
  arrayType: string;
  read: (event: UsageEvent) => ArrayElement;
  /** SQL over the element, named `value`; the element itself when absent. */
  convert?: string;
}

/** Whole numbers for integer columns: an estimate with a fraction must not fail the whole batch. */
const whole = (value: number): number => Math.round(value);

/** The columns of `usage_events`, in the order of the insert's column list and of `unnest`'s arguments. */
const usageColumns: readonly UsageColumn[] = [
  { name: 'request_id', arrayType: 'text[]', read: (event) => event.requestId },
  { name: 'client_request_id', arrayType: 'text[]', read: (event) => event.clientRequestId ?? null },
  { name: 'key_id', arrayType: 'text[]', read: (event) => event.keyId },
  { name: 'model_group', arrayType: 'text[]', read: (event) => event.modelGroup },
  { name: 'provider', arrayType: 'text[]', read: (event) => event.provider },
  { name: 'deployment', arrayType: 'text[]', read: (event) => event.deployment },
  { name: 'upstream_model', arrayType: 'text[]', read: (event) => event.upstreamModel },
  { name: 'operation', arrayType: 'text[]', read: (event) => event.operation },
  { name: 'client_api', arrayType: 'text[]', read: (event) => event.clientApi ?? null },
  { name: 'input_tokens', arrayType: 'integer[]', read: (event) => whole(event.inputTokens) },
  { name: 'output_tokens', arrayType: 'integer[]', read: (event) => whole(event.outputTokens) },
  { name: 'cached_input_tokens', arrayType: 'integer[]', read: (event) => whole(event.cachedInputTokens) },
  { name: 'reasoning_tokens', arrayType: 'integer[]', read: (event) => whole(event.reasoningTokens) },
  { name: 'usage_source', arrayType: 'text[]', read: (event) => event.usageSource },
  { name: 'cost_usd', arrayType: 'double precision[]', read: (event) => event.costUsd },
  { name: 'status', arrayType: 'integer[]', read: (event) => whole(event.status) },
  { name: 'stream', arrayType: 'boolean[]', read: (event) => event.stream },
  { name: 'latency_ms', arrayType: 'double precision[]', read: (event) => event.latencyMs },
  { name: 'time_to_first_token_ms', arrayType: 'double precision[]', read: (event) => event.timeToFirstTokenMs },
  { name: 'overhead_ms', arrayType: 'double precision[]', read: (event) => event.overheadMs },
  // Times travel as epoch milliseconds and become timestamps in Postgres: formatting two ISO strings per event in
  // JavaScript cost more than the rest of the row's encoding.
  {
    name: 'started_at',
    arrayType: 'double precision[]',
    read: (event) => event.startedAt,
    convert: 'to_timestamp(value / 1000.0)',
  },
  {
    name: 'finished_at',
    arrayType: 'double precision[]',
    read: (event) => event.finishedAt,
    convert: 'to_timestamp(value / 1000.0)',
  },
];

const columnList = sql.raw(usageColumns.map((column) => `"${column.name}"`).join(', '));
const unnestAlias = sql.raw(`u(${usageColumns.map((_, index) => `c${index}`).join(', ')})`);
const selectList = sql.raw(
  usageColumns
    .map((column, index) => (column.convert === undefined ? `c${index}` : column.convert.replace('value', `c${index}`)))
    .join(', '),
);

/**
 * The {@link UsageSink} over Postgres through Drizzle, for any driver. A batch is ONE statement whatever its size:
 *
 * ```sql
 * insert into usage_events (request_id, ...) select c0, c1, ..., to_timestamp(c19 / 1000.0), ...
 * from unnest($1::text[], $2::text[], ...) as u(c0, c1, ...) on conflict (request_id) do nothing
 * ```
 *
 * One array parameter per column (21 parameters for 1 or 50,000 events), so the statement text is the same for
 * every batch (drivers reuse the prepared statement) and no batch can hit the 65,535-parameter limit of the
 * protocol, which a `values ($1, ...), (...)` insert of 21 columns reaches at ~3,100 rows. `on conflict do nothing`
 * makes a retried batch (or an event repeated within a batch) count once. The statement is atomic: every event is
 * stored or the call throws.
 *
 * @example
 * ```ts
 * const sink = createDrizzleUsageSink(database.db);
 * await sink.write(events); // safe to call again with the same events after a failure
 * ```
 */
export function createDrizzleUsageSink(db: ToriiDatabase): UsageSink {
  return {
    async write(events) {
      if (events.length === 0) return;
      const arrays = usageColumns.map(
        (column) => sql`${postgresArrayLiteralOf(events, column.read)}::${sql.raw(column.arrayType)}`,
      );
      await db.execute(
        sql`insert into "usage_events" (${columnList}) select ${selectList} from unnest(${sql.join(arrays, sql`, `)}) as ${unnestAlias} on conflict ("request_id") do nothing`,
      );
    },
  };
}
