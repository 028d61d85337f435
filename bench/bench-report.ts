import type { Generator, MeasurementKind, ShapeName, TargetName } from './bench-plan.ts';
import { shapeNames } from './bench-plan.ts';

/**
 * The benchmark's rows as written to `bench/results/latest.json`, how the rounds of a measurement merge into a row,
 * the paired comparisons between targets measured in the same rounds, and the per-scenario summary of every target.
 * Pure functions, no I/O, so they are unit tested (`bench-report.test.ts`); the tables are in `bench-tables.ts`, the
 * acceptance checks in `bench-checks.ts`.
 */

/** One run of one target in one round of a measurement. */
export interface RoundResult {
  /** The round, 1-based; targets measured in the same round ran within seconds of each other. */
  round: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  /** The target process tree's CPU time (user + system) over the run, per completed request; null if not read. */
  cpu_ms_per_request: number | null;
  /**
   * First-byte runs of a shape: the median of the per-step differences to the row's `paired_with` (the floor, or
   * production-master for the virtual key's cost), measured step by step in the same run (`bench-first-byte.ts`,
   * paired); absent elsewhere.
   */
  paired_difference_p50_ms?: number;
  /**
   * The hypervisor's steal over the run, percent of the busier of the target's and the load's CPUs
   * (`stealPercent`); absent where not read.
   */
  steal_percent?: number;
}

/**
 * One measurement of one target: the medians of its rounds. Field names are the JSON contract of
 * `bench/results/latest.json`. On `first-byte` rows `p50_ms` and `p99_ms` are times to the first body byte.
 */
export interface BenchRow {
  target: TargetName;
  scenario: string;
  measurement: MeasurementKind;
  generator: Generator;
  connections: number;
  /** Aggregate requests per second the load was paced to; only on fixed-rate rows (`rate`, `hey`). */
  rate?: number;
  /** First-byte rows of a shape: the target its runs were paired with step by step. */
  paired_with?: TargetName;
  /** Requests completed over every round. */
  requests: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  /** Non-2xx responses plus socket errors (connect, read, write, timeout), summed over the rounds. */
  errors: number;
  /** Median over the rounds of the process tree's CPU ms per request; null when not measured. */
  cpu_ms_per_request: number | null;
  /** The highest peak RSS (VmHWM summed over the process tree) of the rounds; null when not measured. */
  peak_rss_mb: number | null;
  /** Exec to the first 200 on a chat request, measured once per process at startup. */
  cold_start_s: number | null;
  /** Every round, for the paired comparisons (same-round differences). */
  rounds: RoundResult[];
}

/**
 * Where the CPU time went during a run, in percent of one core, sampled over the middle of the run. The target is
 * pinned to CPU 0, the load generator, the mock upstream, PostgreSQL and Redis to CPU 1.
 */
export interface LoadSideUsage {
  cpu0Percent: number;
  cpu1Percent: number;
  wrkPercent: number;
  mockPercent: number;
  targetPercent: number;
  /** Every other process on the machine (concurrent builds, other users): a noisy run shows up here. */
  otherPercent: number;
}

/** A row plus what is printed but not written to the JSON. */
export interface ReportRow {
  row: BenchRow;
  load?: LoadSideUsage;
}

/** The network counts of the production shape at the fixed rate, per 1,000 requests (from `bench-network.ts`). */
export interface ServiceCounts {
  scenario: string;
  redisCommandsPer1000: number;
  postgresTransactionsPer1000: number;
}

/** The identity of a measurement across targets: kind, scenario, connections, rate. */
export function measurementKey(row: Pick<BenchRow, 'measurement' | 'scenario' | 'connections' | 'rate'>): string {
  return `${row.measurement}|${row.scenario}|${row.connections}|${row.rate ?? 'max'}`;
}

/** The median of a non-empty list. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** One run as measured, before the rounds are merged. */
export interface RunResult extends RoundResult {
  requests: number;
  errors: number;
  peakRssMb: number | null;
  load?: LoadSideUsage;
}

/**
 * Merges the runs of one target's measurement into its row: the median of rps, p50, p99 and CPU per request (each on
 * its own), the sum of requests and errors, the highest peak RSS, and the load-side sample of the median-throughput
 * run. Undefined without runs.
 */
export function mergeRounds(
  identity: Pick<
    BenchRow,
    'target' | 'scenario' | 'measurement' | 'generator' | 'connections' | 'rate' | 'paired_with'
  >,
  runs: readonly RunResult[],
  coldStartSeconds: number | null,
): ReportRow | undefined {
  if (runs.length === 0) return undefined;
  const byThroughput = [...runs].sort((left, right) => left.rps - right.rps);
  const middle = byThroughput[Math.floor(byThroughput.length / 2)]!;
  const peaks = runs.map((run) => run.peakRssMb).filter((value): value is number => value !== null);
  const cpu = runs.map((run) => run.cpu_ms_per_request).filter((value): value is number => value !== null);
  const row: BenchRow = {
    target: identity.target,
    scenario: identity.scenario,
    measurement: identity.measurement,
    generator: identity.generator,
    connections: identity.connections,
    ...(identity.rate === undefined ? {} : { rate: identity.rate }),
    ...(identity.paired_with === undefined ? {} : { paired_with: identity.paired_with }),
    requests: runs.reduce((sum, run) => sum + run.requests, 0),
    rps: median(runs.map((run) => run.rps)),
    p50_ms: median(runs.map((run) => run.p50_ms)),
    p99_ms: median(runs.map((run) => run.p99_ms)),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    cpu_ms_per_request: cpu.length === 0 ? null : median(cpu),
    peak_rss_mb: peaks.length === 0 ? null : Math.max(...peaks),
    cold_start_s: coldStartSeconds,
    rounds: runs.map((run) => ({
      round: run.round,
      rps: run.rps,
      p50_ms: run.p50_ms,
      p99_ms: run.p99_ms,
      cpu_ms_per_request: run.cpu_ms_per_request,
      ...(run.paired_difference_p50_ms === undefined ? {} : { paired_difference_p50_ms: run.paired_difference_p50_ms }),
      ...(run.steal_percent === undefined ? {} : { steal_percent: run.steal_percent }),
    })),
  };
  return { row, ...(middle.load === undefined ? {} : { load: middle.load }) };
}

/** The row of `target` for a measurement kind and scenario (the first, if there are several connection counts). */
export function findRow(
  rows: readonly BenchRow[],
  target: TargetName,
  measurement: MeasurementKind,
  scenario: string,
  connections?: number,
): BenchRow | undefined {
  return rows.find(
    (row) =>
      row.target === target &&
      row.measurement === measurement &&
      row.scenario === scenario &&
      (connections === undefined || row.connections === connections),
  );
}

/**
 * The median over the rounds both rows ran of `pick(row round) - pick(base round)` (`difference`) or their ratio
 * (`ratio`): the two ran within seconds of each other in each round, so the machine's drift between rounds cancels
 * out. Undefined when they share no round (or, for ratios, the base is 0 in every shared round).
 *
 * @example
 * pairedMedian(production, floor, (round) => round.p50_ms, 'difference'); // 0.061 (ms added over the floor)
 */
export function pairedMedian(
  row: BenchRow | undefined,
  base: BenchRow | undefined,
  pick: (round: RoundResult) => number,
  how: 'difference' | 'ratio',
  only?: ReadonlySet<number>,
): number | undefined {
  if (row === undefined || base === undefined) return undefined;
  const values: number[] = [];
  for (const round of row.rounds) {
    if (only !== undefined && !only.has(round.round)) continue;
    const other = base.rounds.find((candidate) => candidate.round === round.round);
    if (other === undefined) continue;
    if (how === 'difference') values.push(pick(round) - pick(other));
    else if (pick(other) > 0) values.push(pick(round) / pick(other));
  }
  return values.length === 0 ? undefined : median(values);
}

/**
 * The rounds in which every run of `runs` (each target's rounds; a round missing from a target does not count against
 * it) had the hypervisor's steal at or under `percent`, in ascending order. A run without a steal reading is not
 * quiet.
 *
 * @example
 * quietRounds([floor.rounds, production.rounds], 1); // [1, 3]
 */
export function quietRounds(
  runs: Iterable<readonly Pick<RoundResult, 'round' | 'steal_percent'>[]>,
  percent: number,
): number[] {
  const quiet = new Map<number, boolean>();
  for (const rounds of runs) {
    for (const { round, steal_percent: steal } of rounds) {
      quiet.set(round, (quiet.get(round) ?? true) && steal !== undefined && steal <= percent);
    }
  }
  return [...quiet]
    .filter(([, isQuiet]) => isQuiet)
    .map(([round]) => round)
    .sort((left, right) => left - right);
}

/**
 * A first-byte row's added time to the first byte over its base (the floor, or the row's `paired_with`): the median
 * over its rounds of the per-step differences measured beside the base in each run, when every round has one;
 * otherwise the median of the per-round differences to the base's own row ({@link pairedMedian}). `stepwise` says
 * which.
 */
export function firstByteOverBase(
  row: BenchRow | undefined,
  base: BenchRow | undefined,
): { ms: number; stepwise: boolean } | undefined {
  if (row === undefined) return undefined;
  const stepwise = row.rounds.map((round) => round.paired_difference_p50_ms);
  if (stepwise.length > 0 && stepwise.every((value) => value !== undefined)) {
    return { ms: median(stepwise as number[]), stepwise: true };
  }
  const paired = pairedMedian(row, base, (round) => round.p50_ms, 'difference');
  return paired === undefined ? undefined : { ms: paired, stepwise: false };
}

/** The row of production's chat requests paired step by step with production-master: the virtual key's own cost. */
export function keyPairRow(rows: readonly BenchRow[]): BenchRow | undefined {
  return rows.find(
    (row) =>
      row.target === 'production' &&
      row.measurement === 'first-byte' &&
      row.scenario === 'chat' &&
      row.paired_with === 'production-master',
  );
}

/** A fixed-rate row whose target delivered under 95% of the rate: it was saturated, not paced. */
export function missedRate(row: BenchRow): boolean {
  return row.rate !== undefined && row.rps < 0.95 * row.rate;
}

/** The highest peak RSS over a target's rows (every scenario, or one); null when none was measured. */
export function peakRss(rows: readonly BenchRow[], target: TargetName, scenario?: string): number | null {
  const values = rows
    .filter((row) => row.target === target && (scenario === undefined || row.scenario === scenario))
    .map((row) => row.peak_rss_mb)
    .filter((value): value is number => value !== null);
  return values.length === 0 ? null : Math.max(...values);
}

/** Whether a target runs with external services (PostgreSQL, Redis): only the production process does. */
export function hasServices(target: TargetName): boolean {
  return target === 'production' || target === 'production-master';
}

/** One target's line of a scenario's summary table. */
export interface TargetSummary {
  target: TargetName;
  maxRps: number | null;
  /** Median of the per-round ratios to the floor's max rps. */
  maxRpsRatio: number | null;
  rateP50Ms: number | null;
  rateP99Ms: number | null;
  /** Median of the per-round differences to the floor's p99 at the fixed rate. */
  rateP99MinusFloorMs: number | null;
  /** Median of the per-round differences to the floor's p50 at concurrency 1. */
  addedP50C1Ms: number | null;
  /**
   * `production` only: the virtual key's added p50 at concurrency 1 over the master key. In `chat`, the median over
   * the rounds of the step-by-step differences to production-master (the key-pair row); without that row, the median
   * of the per-round differences of the two c1 rows.
   */
  keyAddedP50C1Ms: number | null;
  ttfbP50Ms: number | null;
  ttfbP99Ms: number | null;
  /** Median of the per-round differences to the floor's time-to-first-byte p50. */
  ttfbMinusFloorMs: number | null;
  cpuMsPerRequestAtRate: number | null;
  cpuMsPerRequestAtMax: number | null;
  peakRssMb: number | null;
  peakRssRatio: number | null;
  coldStartS: number | null;
  /** Per 1,000 requests at the fixed rate; null where not measured (the floor) or not applicable (no services). */
  redisPer1000: number | null;
  postgresPer1000: number | null;
  errors: number;
  /** The load-side sample of the max-throughput row. */
  load?: LoadSideUsage;
}

/** The targets of a scenario's summary table, in order (the mock is reported separately). */
export const summaryTargets: readonly TargetName[] = ['floor', ...shapeNames, 'production-master', 'lean-ten'];

/**
 * Summarizes a scenario: one line per target that has rows in it (floor, the shapes, production-master), from the
 * max-throughput, fixed-rate, concurrency-1 and first-byte rows, with the paired comparisons to the floor.
 */
export function summarizeScenario(
  reportRows: readonly ReportRow[],
  scenario: string,
  serviceCounts: readonly ServiceCounts[] = [],
): TargetSummary[] {
  const rows = reportRows.map((reportRow) => reportRow.row);
  const summaries: TargetSummary[] = [];
  const floorRss = peakRss(rows, 'floor', scenario);
  for (const target of summaryTargets) {
    const mine = rows.filter((row) => row.target === target && row.scenario === scenario);
    if (mine.length === 0) continue;
    const max = findRow(rows, target, 'max', scenario);
    const rate = findRow(rows, target, 'rate', scenario);
    const c1 = findRow(rows, target, 'c1', scenario);
    const ttfb = rows.find(
      (row) =>
        row.target === target &&
        row.measurement === 'first-byte' &&
        row.scenario === scenario &&
        (row.paired_with ?? 'floor') === 'floor',
    );
    const keyPair = target === 'production' && scenario === 'chat' ? keyPairRow(rows) : undefined;
    const floor = (kind: MeasurementKind): BenchRow | undefined => findRow(rows, 'floor', kind, scenario);
    const isFloor = target === 'floor';
    const paired = (
      row: BenchRow | undefined,
      base: BenchRow | undefined,
      pick: (round: RoundResult) => number,
      how: 'difference' | 'ratio',
    ): number | null => (isFloor ? null : (pairedMedian(row, base, pick, how) ?? null));
    const rss = peakRss(rows, target, scenario);
    const counts = serviceCounts.find((each) => each.scenario === scenario);
    const services = target === 'production' && counts !== undefined;
    const noServices = !isFloor && !hasServices(target);
    const maxReport = reportRows.find((reportRow) => reportRow.row === max);
    summaries.push({
      target,
      maxRps: max?.rps ?? null,
      maxRpsRatio: paired(max, floor('max'), (round) => round.rps, 'ratio'),
      rateP50Ms: rate?.p50_ms ?? null,
      rateP99Ms: rate?.p99_ms ?? null,
      rateP99MinusFloorMs: paired(rate, floor('rate'), (round) => round.p99_ms, 'difference'),
      addedP50C1Ms: paired(c1, floor('c1'), (round) => round.p50_ms, 'difference'),
      keyAddedP50C1Ms:
        keyPair !== undefined
          ? (firstByteOverBase(keyPair, undefined)?.ms ?? null)
          : target === 'production'
            ? (pairedMedian(
                c1,
                findRow(rows, 'production-master', 'c1', scenario),
                (round) => round.p50_ms,
                'difference',
              ) ?? null)
            : null,
      ttfbP50Ms: ttfb?.p50_ms ?? null,
      ttfbP99Ms: ttfb?.p99_ms ?? null,
      ttfbMinusFloorMs: isFloor ? null : (firstByteOverBase(ttfb, floor('first-byte'))?.ms ?? null),
      cpuMsPerRequestAtRate: rate?.cpu_ms_per_request ?? null,
      cpuMsPerRequestAtMax: max?.cpu_ms_per_request ?? null,
      peakRssMb: rss,
      peakRssRatio: rss !== null && floorRss !== null && floorRss > 0 ? rss / floorRss : null,
      coldStartS: mine.find((row) => row.cold_start_s !== null)?.cold_start_s ?? null,
      redisPer1000: services ? counts.redisCommandsPer1000 : noServices ? 0 : null,
      postgresPer1000: services ? counts.postgresTransactionsPer1000 : noServices ? 0 : null,
      errors: mine.reduce((sum, row) => sum + row.errors, 0),
      ...(maxReport?.load === undefined ? {} : { load: maxReport.load }),
    });
  }
  return summaries;
}

/** Per shape, its highest peak RSS over every row, and the floor's. */
export function peakRssByShape(rows: readonly BenchRow[]): { target: 'floor' | ShapeName; peakRssMb: number | null }[] {
  return (['floor', ...shapeNames] as const).map((target) => ({
    target,
    peakRssMb:
      target === 'production'
        ? maxOf(peakRss(rows, 'production'), peakRss(rows, 'production-master'))
        : target === 'lean'
          ? maxOf(peakRss(rows, 'lean'), peakRss(rows, 'lean-ten'))
          : peakRss(rows, target),
  }));
}

function maxOf(left: number | null, right: number | null): number | null {
  if (left === null) return right;
  if (right === null) return left;
  return Math.max(left, right);
}

/** The hey cross-check: per target, wrk's fixed-rate chat row beside hey's row at the same rate. */
export interface CrossCheck {
  target: TargetName;
  wrk: BenchRow | undefined;
  hey: BenchRow;
}

/** Pairs every hey row with the wrk row of the same target, scenario and rate. */
export function crossChecks(rows: readonly BenchRow[]): CrossCheck[] {
  return rows
    .filter((row) => row.measurement === 'hey')
    .map((hey) => ({
      target: hey.target,
      hey,
      wrk: rows.find(
        (row) =>
          row.target === hey.target &&
          row.measurement === 'rate' &&
          row.scenario === hey.scenario &&
          row.rate === hey.rate,
      ),
    }));
}

/** Rounds a row's numbers for the JSON file and fixes the field order. */
export function roundRow(row: BenchRow): BenchRow {
  const round = (value: number, digits: number): number => Number(value.toFixed(digits));
  const nullable = (value: number | null, digits: number): number | null =>
    value === null ? null : round(value, digits);
  return {
    target: row.target,
    scenario: row.scenario,
    measurement: row.measurement,
    generator: row.generator,
    connections: row.connections,
    ...(row.rate === undefined ? {} : { rate: row.rate }),
    requests: row.requests,
    rps: round(row.rps, 1),
    p50_ms: round(row.p50_ms, 3),
    p99_ms: round(row.p99_ms, 3),
    errors: row.errors,
    cpu_ms_per_request: nullable(row.cpu_ms_per_request, 4),
    peak_rss_mb: nullable(row.peak_rss_mb, 1),
    cold_start_s: nullable(row.cold_start_s, 3),
    rounds: row.rounds.map((each) => ({
      round: each.round,
      rps: round(each.rps, 1),
      p50_ms: round(each.p50_ms, 3),
      p99_ms: round(each.p99_ms, 3),
      cpu_ms_per_request: nullable(each.cpu_ms_per_request, 4),
      ...(each.steal_percent === undefined ? {} : { steal_percent: round(each.steal_percent, 2) }),
    })),
  };
}

/** A summary line as written to the JSON (`summary` of `bench/results/latest.json`): snake case, rounded. */
export function summaryDocument(summary: TargetSummary): Record<string, unknown> {
  const round = (value: number | null, digits: number): number | null =>
    value === null ? null : Number(value.toFixed(digits));
  return {
    target: summary.target,
    max_rps: round(summary.maxRps, 1),
    max_rps_ratio_to_floor: round(summary.maxRpsRatio, 3),
    rate_p50_ms: round(summary.rateP50Ms, 3),
    rate_p99_ms: round(summary.rateP99Ms, 3),
    rate_p99_minus_floor_ms: round(summary.rateP99MinusFloorMs, 3),
    c1_added_p50_ms: round(summary.addedP50C1Ms, 3),
    c1_key_added_p50_ms: round(summary.keyAddedP50C1Ms, 3),
    ttfb_p50_ms: round(summary.ttfbP50Ms, 3),
    ttfb_p99_ms: round(summary.ttfbP99Ms, 3),
    ttfb_minus_floor_ms: round(summary.ttfbMinusFloorMs, 3),
    cpu_ms_per_request_at_rate: round(summary.cpuMsPerRequestAtRate, 4),
    cpu_ms_per_request_at_max: round(summary.cpuMsPerRequestAtMax, 4),
    peak_rss_mb: round(summary.peakRssMb, 1),
    peak_rss_ratio_to_floor: round(summary.peakRssRatio, 2),
    cold_start_s: round(summary.coldStartS, 3),
    redis_commands_per_1000_requests: round(summary.redisPer1000, 2),
    postgres_transactions_per_1000_requests: round(summary.postgresPer1000, 2),
    errors: summary.errors,
  };
}
