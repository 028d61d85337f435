import { formatColumns } from './bench-tables.ts';

/**
 * The "many keys, cold cache -> warm" report of `pnpm bench:keys`: one row per time slice (one short wrk run) with its
 * throughput and latency, and what the key lookups cost on the network in that slice: Postgres selects of a key by
 * hash (the store tier), Redis GETs of the shared key cache, and the limit scripts (a fresh process leases RPM and TPM
 * slices for every key it sees). Pure functions, no I/O, so they are unit tested; the counters are read by
 * `bench-keys-counters.ts` and the slices run by `run-bench-keys.ts`.
 */

/** One reading of the counters the keys bench follows around each slice. */
export interface KeyCounters {
  /** `performance.now()` when read. */
  at: number;
  /** `Date.now()` when read (rate-limit windows align to the wall clock). */
  wallClock: number;
  /** Calls per Redis command (`INFO commandstats`, which also counts the commands scripts run inside Redis). */
  redisCalls: Record<string, number>;
  /** Failed calls per Redis command (an `EVALSHA` answered `NOSCRIPT` ran nothing). */
  redisFailedCalls: Record<string, number>;
  /** Selects of one key by hash in the bench database: the lookups that reached Postgres. */
  postgresKeySelects: number;
  /** Blocks those selects read from outside PostgreSQL's buffer cache (0 when not known). */
  postgresKeyBlocksRead: number;
  /** CPU time of the torii process tree, in clock ticks (100 per second). */
  toriiCpuTicks: number;
  /** Busy and total ticks since boot of torii's core and of the load core (wrk, mock, PostgreSQL, Redis). */
  targetCpu: { busy: number; total: number };
  loadCpu: { busy: number; total: number };
  /** CPU time of every process outside the benchmark (other work on the machine), in clock ticks. */
  otherCpuTicks: number;
}

/** The parts of a slice's run that the report uses (a subset of bench-wrk.ts's `WrkResult`). */
export interface SliceLoad {
  requests: number;
  requestsPerSecond: number;
  errors: number;
  latencyMilliseconds: { p50: number; p99: number };
}

/**
 * Phases of a variant: `cold` from the first request with any load key, `warm` once every key has been seen, and
 * `expiry` past the in-process tier's 30-second trust, when entries are re-read from the shared tier.
 */
export type KeysPhase = 'cold' | 'warm' | 'expiry';

/** One slice of one variant, as printed and written to the JSON file. */
export interface KeySliceRow {
  phase: KeysPhase;
  /** Seconds since the variant's first slice started. */
  start_s: number;
  end_s: number;
  requests: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
  /** Key selects that reached Postgres. */
  postgres_key_lookups: number;
  /** Blocks those selects read from outside PostgreSQL's buffer cache. */
  postgres_blocks_read: number;
  /** GETs of the shared key cache: Redis GETs minus the GET every limit script runs inside Redis. */
  redis_key_reads: number;
  /** Limit scripts that ran (`EVALSHA`, or `EVAL` after a `NOSCRIPT`): leases, releases, additions. */
  redis_limit_scripts: number;
  /** Every Redis command counted (those scripts run inside Redis too), the observer's `INFO` and `EXISTS` left out. */
  redis_commands: number;
  /** Keys expected to be requested for the first time in this slice, if every request picks one of `keys` at random. */
  expected_new_keys: number;
  /** torii's CPU over the slice, percent of one core. */
  torii_cpu_percent: number;
  /** How busy torii's core and the load core were over the slice, percent. */
  cpu0_percent: number;
  cpu1_percent: number;
  /** Processes outside the benchmark over the slice, percent of one core: above ~10 the slice is noisy. */
  other_percent: number;
  /** The slice spans the start of a rate-limit window (a wall-clock minute): every key leases anew. */
  window_boundary: boolean;
}

/** Ticks per second of `/proc/<pid>/stat` CPU times. */
const ticksPerSecond = 100;

/** Commands the bench's own observer sends to Redis (`bench-keys-counters.ts`), left out of the totals. */
const observerCommands = new Set(['info', 'exists', 'flushall']);

/** Default rate-limit window: one minute, aligned to the epoch. */
const windowMilliseconds = 60_000;

const delta = (after: Record<string, number>, before: Record<string, number>, name: string): number =>
  (after[name] ?? 0) - (before[name] ?? 0);

/**
 * Parses `INFO commandstats` into calls and failed calls per command (lower-case names).
 *
 * @example
 * parseRedisCommandCalls('cmdstat_evalsha:calls=5,usec=9,usec_per_call=1.8,rejected_calls=0,failed_calls=1\r\n');
 * // { calls: { evalsha: 5 }, failed: { evalsha: 1 } }
 */
export function parseRedisCommandCalls(info: string): {
  calls: Record<string, number>;
  failed: Record<string, number>;
} {
  const calls: Record<string, number> = {};
  const failed: Record<string, number> = {};
  for (const line of info.split(/\r?\n/)) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (match === null) continue;
    const command = match[1]!.toLowerCase();
    calls[command] = Number(match[2]);
    failed[command] = Number(/failed_calls=(\d+)/.exec(line)?.[1] ?? 0);
  }
  return { calls, failed };
}

/**
 * How many of `keys` keys are expected to be requested for the first time between request number `before` and
 * `after`, when every request picks one of them uniformly at random: `keys * (e^(-before/keys) - e^(-after/keys))`.
 * In a cold process each of them is one lookup below the in-process tier.
 *
 * @example
 * expectedNewKeys(10_000, 0, 10_000); // ~6,321: after as many requests as keys, 63% of the keys have been seen
 */
export function expectedNewKeys(keys: number, before: number, after: number): number {
  if (keys <= 0 || after <= before) return 0;
  return keys * (Math.exp(-before / keys) - Math.exp(-after / keys));
}

/**
 * One slice's row from the counters read right before and right after its run. `requestsBefore` is the number of
 * requests with load keys the process served before this slice (for the expected first sightings).
 *
 * @example
 * const row = keySliceRow({ phase: 'cold', origin, before, after, load, keys: 10_000, requestsBefore: 0 });
 */
export function keySliceRow(options: {
  phase: KeysPhase;
  /** `performance.now()` when the variant's first slice started. */
  origin: number;
  before: KeyCounters;
  after: KeyCounters;
  load: SliceLoad;
  keys: number;
  requestsBefore: number;
}): KeySliceRow {
  const { before, after, load } = options;
  // Each lease or release script runs one GET inside Redis, which INFO commandstats counts like a client's; an
  // EVALSHA answered NOSCRIPT ran nothing (the EVAL that follows it runs the script).
  const scripts =
    delta(after.redisCalls, before.redisCalls, 'evalsha') -
    delta(after.redisFailedCalls, before.redisFailedCalls, 'evalsha') +
    delta(after.redisCalls, before.redisCalls, 'eval') -
    delta(after.redisFailedCalls, before.redisFailedCalls, 'eval');
  const seconds = (after.at - before.at) / 1_000;
  const processPercent = (first: number, last: number): number =>
    seconds > 0 ? ((last - first) / ticksPerSecond / seconds) * 100 : 0;
  const busyPercent = (first: KeyCounters['loadCpu'], last: KeyCounters['loadCpu']): number =>
    last.total > first.total ? ((last.busy - first.busy) / (last.total - first.total)) * 100 : 0;
  return {
    phase: options.phase,
    start_s: (before.at - options.origin) / 1_000,
    end_s: (after.at - options.origin) / 1_000,
    requests: load.requests,
    rps: load.requestsPerSecond,
    p50_ms: load.latencyMilliseconds.p50,
    p99_ms: load.latencyMilliseconds.p99,
    errors: load.errors,
    postgres_key_lookups: after.postgresKeySelects - before.postgresKeySelects,
    postgres_blocks_read: after.postgresKeyBlocksRead - before.postgresKeyBlocksRead,
    redis_key_reads: delta(after.redisCalls, before.redisCalls, 'get') - scripts,
    redis_limit_scripts: scripts,
    redis_commands: Object.keys(after.redisCalls)
      .filter((command) => !observerCommands.has(command))
      .reduce((sum, command) => sum + delta(after.redisCalls, before.redisCalls, command), 0),
    expected_new_keys: expectedNewKeys(options.keys, options.requestsBefore, options.requestsBefore + load.requests),
    torii_cpu_percent: processPercent(before.toriiCpuTicks, after.toriiCpuTicks),
    cpu0_percent: busyPercent(before.targetCpu, after.targetCpu),
    cpu1_percent: busyPercent(before.loadCpu, after.loadCpu),
    other_percent: Math.max(0, processPercent(before.otherCpuTicks, after.otherCpuTicks)),
    window_boundary:
      Math.floor(before.wallClock / windowMilliseconds) !== Math.floor(after.wallClock / windowMilliseconds),
  };
}

/** What a variant's slices add up to. */
export interface VariantSummary {
  /** Medians over the `warm` slices (null without any). */
  warm_rps: number | null;
  warm_p50_ms: number | null;
  warm_p99_ms: number | null;
  /** The first `cold` slice against the warm medians (rps below 1 and latencies above 1 mean slower). */
  first_slice_rps_ratio: number | null;
  first_slice_p50_ratio: number | null;
  first_slice_p99_ratio: number | null;
  /** End of the first cold slice from which every later cold slice reaches 90% of the warm rps (null: none did). */
  seconds_to_90_percent_rps: number | null;
  /** End of the slice by which 99% of the cold phase's lookups of the tier below the local one had happened. */
  seconds_to_99_percent_lookups: number | null;
  /**
   * Requests served by then: warmth depends on requests rather than time (with K keys picked at random, 99% have been
   * seen after K x ln 100 = 4.6 K requests), so this one does not drift with the machine's speed.
   */
  requests_to_99_percent_lookups: number | null;
  /** Totals over the cold phase. */
  cold_postgres_key_lookups: number;
  cold_redis_key_reads: number;
  cold_redis_limit_scripts: number;
  cold_requests: number;
  /** Totals over the warm phase, per second. */
  warm_postgres_key_lookups_per_second: number | null;
  warm_redis_key_reads_per_second: number | null;
  /** Totals over the expiry phase, per second. */
  expiry_redis_key_reads_per_second: number | null;
  errors: number;
}

function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const ratio = (value: number | undefined, reference: number | null): number | null =>
  value === undefined || reference === null || reference === 0 ? null : value / reference;

function perSecond(rows: readonly KeySliceRow[], pick: (row: KeySliceRow) => number): number | null {
  const seconds = rows.reduce((sum, row) => sum + (row.end_s - row.start_s), 0);
  return seconds > 0 ? rows.reduce((sum, row) => sum + pick(row), 0) / seconds : null;
}

/**
 * Sums up a variant: warm medians, the first cold slice against them, how long the cold phase took to reach 90% of
 * the warm throughput, and when 99% of its lookups below the in-process tier had happened (`tier` says which: the
 * store when the shared cache was empty too, the shared cache when it was warm).
 *
 * @example
 * const summary = summarizeVariant(rows, 'postgres');
 */
export function summarizeVariant(rows: readonly KeySliceRow[], tier: 'postgres' | 'redis'): VariantSummary {
  const cold = rows.filter((row) => row.phase === 'cold');
  const warm = rows.filter((row) => row.phase === 'warm');
  const expiry = rows.filter((row) => row.phase === 'expiry');
  const warmRps = median(warm.map((row) => row.rps));
  const warmP50 = median(warm.map((row) => row.p50_ms));
  const warmP99 = median(warm.map((row) => row.p99_ms));
  let secondsTo90: number | null = null;
  if (warmRps !== null) {
    for (let index = cold.length - 1; index >= 0 && cold[index]!.rps >= 0.9 * warmRps; index--) {
      secondsTo90 = index === 0 ? 0 : cold[index - 1]!.end_s;
    }
  }
  const lookups = (row: KeySliceRow): number => (tier === 'postgres' ? row.postgres_key_lookups : row.redis_key_reads);
  const totalLookups = cold.reduce((sum, row) => sum + lookups(row), 0);
  let secondsTo99: number | null = null;
  let requestsTo99: number | null = null;
  let running = 0;
  let requests = 0;
  for (const row of cold) {
    running += lookups(row);
    requests += row.requests;
    if (totalLookups > 0 && running >= 0.99 * totalLookups) {
      secondsTo99 = row.end_s;
      requestsTo99 = requests;
      break;
    }
  }
  const sum = (list: readonly KeySliceRow[], pick: (row: KeySliceRow) => number): number =>
    list.reduce((total, row) => total + pick(row), 0);
  return {
    warm_rps: warmRps,
    warm_p50_ms: warmP50,
    warm_p99_ms: warmP99,
    first_slice_rps_ratio: ratio(cold[0]?.rps, warmRps),
    first_slice_p50_ratio: ratio(cold[0]?.p50_ms, warmP50),
    first_slice_p99_ratio: ratio(cold[0]?.p99_ms, warmP99),
    seconds_to_90_percent_rps: secondsTo90,
    seconds_to_99_percent_lookups: secondsTo99,
    requests_to_99_percent_lookups: requestsTo99,
    cold_postgres_key_lookups: sum(cold, (row) => row.postgres_key_lookups),
    cold_redis_key_reads: sum(cold, (row) => row.redis_key_reads),
    cold_redis_limit_scripts: sum(cold, (row) => row.redis_limit_scripts),
    cold_requests: sum(cold, (row) => row.requests),
    warm_postgres_key_lookups_per_second: perSecond(warm, (row) => row.postgres_key_lookups),
    warm_redis_key_reads_per_second: perSecond(warm, (row) => row.redis_key_reads),
    expiry_redis_key_reads_per_second: perSecond(expiry, (row) => row.redis_key_reads),
    errors: sum(rows, (row) => row.errors),
  };
}

/** One variant of the run: how the caches started, its slices and their summary. */
export interface KeysVariant {
  /** `cold-redis` (fresh process, Redis flushed) or `warm-redis` (fresh process, Redis kept). */
  name: string;
  description: string;
  /** The tier below the in-process one that the cold phase's misses reach. */
  tier: 'postgres' | 'redis';
  /** Load keys whose record the shared cache (Redis) held when the variant's first slice started. */
  heldInRedisAtStart: number;
  rows: KeySliceRow[];
  summary: VariantSummary;
}

const fixed = (value: number, digits: number): string => value.toFixed(digits);
const orDash = (value: number | null, digits: number, suffix = ''): string =>
  value === null ? '-' : `${value.toFixed(digits)}${suffix}`;

/** The table of one variant: one line per slice (`*` marks a slice spanning a rate-limit window start). */
export function formatVariantTable(variant: KeysVariant): string {
  const header = [
    'phase',
    't_s',
    'rps',
    'p50_ms',
    'p99_ms',
    'errors',
    'pg_lookups',
    'pg_blocks_read',
    'redis_key_gets',
    'expected_new_keys',
    'limit_scripts',
    'redis_cmds',
    'torii%',
    'cpu0%',
    'cpu1%',
    'other%',
  ];
  const lines = variant.rows.map((row) => [
    row.phase,
    `${fixed(row.start_s, 1)}-${fixed(row.end_s, 1)}${row.window_boundary ? '*' : ''}`,
    fixed(row.rps, 0),
    fixed(row.p50_ms, 3),
    fixed(row.p99_ms, 3),
    String(row.errors),
    String(row.postgres_key_lookups),
    String(row.postgres_blocks_read),
    String(row.redis_key_reads),
    fixed(row.expected_new_keys, 0),
    String(row.redis_limit_scripts),
    String(row.redis_commands),
    fixed(row.torii_cpu_percent, 0),
    fixed(row.cpu0_percent, 0),
    fixed(row.cpu1_percent, 0),
    fixed(row.other_percent, 0),
  ]);
  return formatColumns(header, lines);
}

/** The summary lines of one variant. */
export function formatVariantSummary(variant: KeysVariant): string[] {
  const summary = variant.summary;
  const lookupsTier = variant.tier === 'postgres' ? 'Postgres lookups' : 'Redis key reads';
  return [
    `  warm (median of the warm slices): ${orDash(summary.warm_rps, 0)} rps, p50 ${orDash(summary.warm_p50_ms, 3)} ms, ` +
      `p99 ${orDash(summary.warm_p99_ms, 3)} ms`,
    `  first cold slice / warm: rps ${orDash(summary.first_slice_rps_ratio, 2, 'x')}, ` +
      `p50 ${orDash(summary.first_slice_p50_ratio, 2, 'x')}, p99 ${orDash(summary.first_slice_p99_ratio, 2, 'x')}`,
    `  rps at >= 90% of warm from ${orDash(summary.seconds_to_90_percent_rps, 1, ' s')} on; ` +
      `99% of the cold phase's ${lookupsTier} done by ${orDash(summary.seconds_to_99_percent_lookups, 1, ' s')} ` +
      `(${orDash(summary.requests_to_99_percent_lookups, 0)} requests)`,
    `  cold phase: ${summary.cold_requests} requests, ${summary.cold_postgres_key_lookups} Postgres lookups, ` +
      `${summary.cold_redis_key_reads} Redis key reads, ${summary.cold_redis_limit_scripts} limit scripts`,
    `  warm phase: ${orDash(summary.warm_postgres_key_lookups_per_second, 1)} Postgres lookups/s, ` +
      `${orDash(summary.warm_redis_key_reads_per_second, 1)} Redis key reads/s; expiry phase: ` +
      `${orDash(summary.expiry_redis_key_reads_per_second, 1)} Redis key reads/s`,
    ...(summary.errors === 0 ? [] : [`  WARNING: ${summary.errors} errors (refused or failed requests)`]),
  ];
}

/** The JSON document of the run (`bench/results/keys-latest.json`), numbers rounded. */
export function keysResultsDocument(settings: object, variants: readonly KeysVariant[]): object {
  const round = (value: number | null, digits: number): number | null =>
    value === null ? null : Number(value.toFixed(digits));
  return {
    settings,
    variants: variants.map((variant) => ({
      name: variant.name,
      description: variant.description,
      tier: variant.tier,
      held_in_redis_at_start: variant.heldInRedisAtStart,
      summary: Object.fromEntries(
        Object.entries(variant.summary).map(([name, value]) => [name, round(value as number | null, 3)]),
      ),
      rows: variant.rows.map((row) => ({
        ...row,
        start_s: round(row.start_s, 2),
        end_s: round(row.end_s, 2),
        rps: round(row.rps, 1),
        p50_ms: round(row.p50_ms, 3),
        p99_ms: round(row.p99_ms, 3),
        expected_new_keys: round(row.expected_new_keys, 1),
        torii_cpu_percent: round(row.torii_cpu_percent, 1),
        cpu0_percent: round(row.cpu0_percent, 1),
        cpu1_percent: round(row.cpu1_percent, 1),
        other_percent: round(row.other_percent, 1),
      })),
    })),
  };
}
