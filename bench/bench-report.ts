/**
 * The benchmark report: rows as written to `bench/results/latest.json`, their comparison with the floor measured in
 * the same run, the acceptance checks, and the printed tables. Pure functions, no I/O, so they are unit tested.
 */

/**
 * Who served the load: the mock upstream directly, the bare pass-through proxy, the gateway with its master key
 * (`torii`), or the same gateway process with a virtual key that has RPM/TPM limits and a budget (`torii-key`).
 */
export type TargetName = 'mock' | 'floor' | 'torii' | 'torii-key';

/** Every target, in report order. */
export const targetNames: readonly TargetName[] = ['mock', 'floor', 'torii', 'torii-key'];

/**
 * One measurement: one target, one scenario, one connection count. Field names are the JSON contract of
 * `bench/results/latest.json`. `rate` is present only on fixed-rate rows (wrk paced to that many requests per second
 * in aggregate); rows without it ran as fast as the connections allowed.
 */
export interface BenchRow {
  target: TargetName;
  scenario: string;
  connections: number;
  rate?: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  /** Non-2xx responses plus socket errors (connect, read, write, timeout) as counted by wrk. */
  errors: number;
  /** Sum of the peak RSS (VmHWM) of the target's process tree during this measurement; null when not measured. */
  peak_rss_mb: number | null;
  /** Exec to the first 200 on a chat request, measured once per target at startup. */
  cold_start_s: number | null;
  /**
   * torii-key rows only: the median over rounds of this row's value against torii's in the same round (the two run
   * back to back, or at a fixed rate at the same time, so the machine's drift between rounds cancels out): rps
   * ratio, and p99 difference in ms.
   */
  paired_rps_ratio?: number;
  paired_p99_delta_ms?: number;
}

/**
 * The paired comparison of torii-key with torii: for each round the ratio of their rps and the difference of their
 * p99, measured back to back (at a fixed rate: at the same time); the medians of both. Undefined unless both have the same number of rounds (2 or more).
 */
export function pairedRounds(
  keyRounds: readonly ReportRow[] | undefined,
  masterRounds: readonly ReportRow[] | undefined,
): { paired_rps_ratio: number; paired_p99_delta_ms: number } | undefined {
  if (keyRounds === undefined || masterRounds === undefined) return undefined;
  if (keyRounds.length < 2 || keyRounds.length !== masterRounds.length) return undefined;
  const pairs = keyRounds.map((round, index) => [round.row, masterRounds[index]!.row] as const);
  if (pairs.some(([, master]) => master.rps <= 0)) return undefined;
  return {
    paired_rps_ratio: median(pairs.map(([key, master]) => key.rps / master.rps)),
    paired_p99_delta_ms: median(pairs.map(([key, master]) => key.p99_ms - master.p99_ms)),
  };
}

/**
 * Where the CPU time went during a measurement, in percent of one core, sampled over the middle of the run. The
 * target is pinned to CPU 0, the load generator (wrk) and the mock upstream to CPU 1.
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

/** A row's distance to the floor row of the same measurement. */
export interface FloorComparison {
  /** rps / floor rps; null when there is no floor row or the floor did nothing. */
  rpsRatio: number | null;
  /** p50 - floor p50, in ms; null when there is no floor row. */
  p50DeltaMs: number | null;
}

/** The identity of a measurement across targets: scenario, connections and rate. */
export function measurementKey(row: Pick<BenchRow, 'scenario' | 'connections' | 'rate'>): string {
  return `${row.scenario}|${row.connections}|${row.rate ?? 'max'}`;
}

/**
 * Compares a row with the floor row of the same measurement in `rows`.
 *
 * @example
 * compareToFloor(toriiRow, rows); // { rpsRatio: 0.72, p50DeltaMs: 0.18 }
 */
export function compareToFloor(row: BenchRow, rows: readonly BenchRow[]): FloorComparison {
  const key = measurementKey(row);
  const floor = rows.find((candidate) => candidate.target === 'floor' && measurementKey(candidate) === key);
  if (floor === undefined) return { rpsRatio: null, p50DeltaMs: null };
  return {
    rpsRatio: floor.rps > 0 ? row.rps / floor.rps : null,
    p50DeltaMs: row.p50_ms - floor.p50_ms,
  };
}

/** A fixed-rate row whose target delivered under 95% of the rate: it was saturated, not paced. */
export function missedRate(row: BenchRow): boolean {
  return row.rate !== undefined && row.rps < 0.95 * row.rate;
}

/** The outcome of one acceptance threshold. `missing` means a row it needs was not measured; it does not pass. */
export interface AcceptanceCheck {
  name: string;
  status: 'pass' | 'fail' | 'missing';
  detail: string;
}

/** The thresholds the gateway must meet on one core, chat non-stream. */
export const acceptanceThresholds = {
  minimumThroughputRatio: 0.5,
  throughputConnections: 32,
  maximumP50DeltaMs: 0.3,
  lowConnections: 10,
  highConnections: 100,
  maximumRssRatio: 1.5,
  /** torii-key (virtual key, limits, budget) against torii (master key), same process and run. */
  minimumKeyThroughputRatio: 0.9,
  maximumKeyP99DeltaMs: 0.5,
} as const;

function findRow(
  rows: readonly BenchRow[],
  target: TargetName,
  scenario: string,
  connections: number | undefined,
  fixedRate: boolean,
): BenchRow | undefined {
  return rows.find(
    (row) =>
      row.target === target &&
      row.scenario === scenario &&
      (connections === undefined || row.connections === connections) &&
      (row.rate !== undefined) === fixedRate,
  );
}

function peakRss(rows: readonly BenchRow[], target: TargetName): number | null {
  const values = rows.filter((row) => row.target === target && row.peak_rss_mb !== null).map((row) => row.peak_rss_mb!);
  return values.length === 0 ? null : Math.max(...values);
}

/**
 * Checks the acceptance thresholds against one run's rows: torii throughput >= 50% of the floor's at 32 connections;
 * torii p50 within 0.3 ms of the floor's at the fixed rate; no errors on any torii row; torii throughput at 100
 * connections >= at 10; torii peak RSS (the highest of its rows) <= 1.5x the floor's; torii-key throughput >= 90% of
 * torii's at 32 connections; torii-key p99 within 0.5 ms of torii's at the fixed rate. The two torii-key checks also
 * fail when the torii-key row has errors (a 429 or 402 answers fast, so it would flatter the numbers).
 */
export function evaluateAcceptance(rows: readonly BenchRow[]): AcceptanceCheck[] {
  const thresholds = acceptanceThresholds;
  const checks: AcceptanceCheck[] = [];
  const missing = (name: string, what: string): AcceptanceCheck => ({
    name,
    status: 'missing',
    detail: `not measured: ${what}`,
  });
  const verdict = (passed: boolean): 'pass' | 'fail' => (passed ? 'pass' : 'fail');

  const throughputName = `throughput >= ${thresholds.minimumThroughputRatio * 100}% of floor (chat, ${thresholds.throughputConnections} connections)`;
  const toriiThroughput = findRow(rows, 'torii', 'chat', thresholds.throughputConnections, false);
  const floorThroughput = findRow(rows, 'floor', 'chat', thresholds.throughputConnections, false);
  if (toriiThroughput === undefined || floorThroughput === undefined || floorThroughput.rps <= 0) {
    checks.push(missing(throughputName, 'torii or floor chat row'));
  } else {
    const ratio = toriiThroughput.rps / floorThroughput.rps;
    checks.push({
      name: throughputName,
      status: verdict(ratio >= thresholds.minimumThroughputRatio),
      detail: `${formatNumber(toriiThroughput.rps, 0)} vs ${formatNumber(floorThroughput.rps, 0)} rps = ${formatPercent(ratio)}`,
    });
  }

  const latencyName = `p50 within ${thresholds.maximumP50DeltaMs} ms of floor (chat, fixed rate)`;
  // The acceptance rate is the lowest fixed rate measured (the plan's base rate; higher rates are informational).
  const toriiLatency = rows
    .filter((row) => row.target === 'torii' && row.scenario === 'chat' && row.rate !== undefined)
    .sort((left, right) => (left.rate ?? 0) - (right.rate ?? 0))[0];
  const floorLatency =
    toriiLatency && rows.find((row) => row.target === 'floor' && measurementKey(row) === measurementKey(toriiLatency));
  if (toriiLatency === undefined || floorLatency === undefined) {
    checks.push(missing(latencyName, 'torii or floor fixed-rate chat row'));
  } else {
    const delta = toriiLatency.p50_ms - floorLatency.p50_ms;
    const saturated = missedRate(toriiLatency)
      ? ` (torii reached only ${formatNumber(toriiLatency.rps, 0)} rps: saturated, so this includes queueing)`
      : '';
    checks.push({
      name: latencyName,
      status: verdict(delta <= thresholds.maximumP50DeltaMs),
      detail:
        `${formatNumber(toriiLatency.p50_ms, 3)} vs ${formatNumber(floorLatency.p50_ms, 3)} ms at ` +
        `${toriiLatency.rate} rps = ${formatSigned(delta, 3)} ms${saturated}`,
    });
  }

  const errorsName = 'no errors (every torii row)';
  const toriiRows = rows.filter((row) => row.target === 'torii');
  if (toriiRows.length === 0) {
    checks.push(missing(errorsName, 'no torii rows'));
  } else {
    const total = toriiRows.reduce((sum, row) => sum + row.errors, 0);
    checks.push({
      name: errorsName,
      status: verdict(total === 0),
      detail: `${total} errors over ${toriiRows.length} rows`,
    });
  }

  const scalingName = `throughput at ${thresholds.highConnections} connections >= at ${thresholds.lowConnections} (chat)`;
  const low = findRow(rows, 'torii', 'chat', thresholds.lowConnections, false);
  const high = findRow(rows, 'torii', 'chat', thresholds.highConnections, false);
  if (low === undefined || high === undefined) {
    checks.push(missing(scalingName, 'torii chat rows at both connection counts'));
  } else {
    checks.push({
      name: scalingName,
      status: verdict(high.rps >= low.rps),
      detail: `${formatNumber(high.rps, 0)} vs ${formatNumber(low.rps, 0)} rps`,
    });
  }

  const rssName = `peak RSS <= ${thresholds.maximumRssRatio}x floor`;
  const toriiRss = peakRss(rows, 'torii');
  const floorRss = peakRss(rows, 'floor');
  if (toriiRss === null || floorRss === null || floorRss <= 0) {
    checks.push(missing(rssName, 'torii or floor peak RSS'));
  } else {
    checks.push({
      name: rssName,
      status: verdict(toriiRss <= thresholds.maximumRssRatio * floorRss),
      detail: `${formatNumber(toriiRss, 1)} vs ${formatNumber(floorRss, 1)} MB = ${formatNumber(toriiRss / floorRss, 2)}x`,
    });
  }
  checks.push(...evaluateKeyAcceptance(rows));
  return checks;
}

/** The fixed-rate chat row of `target` at the lowest rate measured (the acceptance rate). */
function fixedRateChatRow(rows: readonly BenchRow[], target: TargetName): BenchRow | undefined {
  return rows
    .filter((row) => row.target === target && row.scenario === 'chat' && row.rate !== undefined)
    .sort((left, right) => (left.rate ?? 0) - (right.rate ?? 0))[0];
}

/** The two virtual-key checks: torii-key against torii in the same run (see {@link evaluateAcceptance}). */
function evaluateKeyAcceptance(rows: readonly BenchRow[]): AcceptanceCheck[] {
  const thresholds = acceptanceThresholds;
  const checks: AcceptanceCheck[] = [];
  const errorsNote = (row: BenchRow): string => (row.errors === 0 ? '' : `; ${row.errors} errors on the torii-key row`);

  const throughputName = `torii-key throughput >= ${thresholds.minimumKeyThroughputRatio * 100}% of torii (chat, ${thresholds.throughputConnections} connections)`;
  const key = findRow(rows, 'torii-key', 'chat', thresholds.throughputConnections, false);
  const master = findRow(rows, 'torii', 'chat', thresholds.throughputConnections, false);
  if (key === undefined || master === undefined || master.rps <= 0) {
    checks.push({ name: throughputName, status: 'missing', detail: 'not measured: torii-key or torii chat row' });
  } else {
    // Judged on the rounds paired back to back when there are several (drift between rounds cancels out); the
    // medians of the rows are shown beside it.
    const rowRatio = key.rps / master.rps;
    const ratio = key.paired_rps_ratio ?? rowRatio;
    const paired = key.paired_rps_ratio === undefined ? '' : `; median of the per-round ratios ${formatPercent(ratio)}`;
    checks.push({
      name: throughputName,
      status: ratio >= thresholds.minimumKeyThroughputRatio && key.errors === 0 ? 'pass' : 'fail',
      detail: `${formatNumber(key.rps, 0)} vs ${formatNumber(master.rps, 0)} rps = ${formatPercent(rowRatio)}${paired}${errorsNote(key)}`,
    });
  }

  const latencyName = `torii-key p99 within ${thresholds.maximumKeyP99DeltaMs} ms of torii (chat, fixed rate)`;
  const keyLatency = fixedRateChatRow(rows, 'torii-key');
  const masterLatency =
    keyLatency && rows.find((row) => row.target === 'torii' && measurementKey(row) === measurementKey(keyLatency));
  if (keyLatency === undefined || masterLatency === undefined) {
    checks.push({
      name: latencyName,
      status: 'missing',
      detail: 'not measured: torii-key or torii fixed-rate chat row',
    });
  } else {
    const rowDelta = keyLatency.p99_ms - masterLatency.p99_ms;
    const delta = keyLatency.paired_p99_delta_ms ?? rowDelta;
    const paired =
      keyLatency.paired_p99_delta_ms === undefined
        ? ''
        : `; median of the per-round differences, both driven at the same time, ${formatSigned(delta, 3)} ms`;
    const saturated = missedRate(keyLatency)
      ? ` (torii-key reached only ${formatNumber(keyLatency.rps, 0)} rps: saturated, so this includes queueing)`
      : '';
    checks.push({
      name: latencyName,
      status: delta <= thresholds.maximumKeyP99DeltaMs && keyLatency.errors === 0 ? 'pass' : 'fail',
      detail:
        `${formatNumber(keyLatency.p99_ms, 3)} vs ${formatNumber(masterLatency.p99_ms, 3)} ms at ` +
        `${keyLatency.rate} rps = ${formatSigned(rowDelta, 3)} ms${paired}${saturated}${errorsNote(keyLatency)}`,
    });
  }
  return checks;
}

/**
 * Rounds the numbers for the JSON file and fixes the field order; `rate` appears only on fixed-rate rows. `network`
 * (the Redis and Postgres counts around the torii-key rows, from `networkDocument`) is written when given.
 */
export function resultsDocument(rows: readonly BenchRow[], network?: object): { rows: BenchRow[]; network?: object } {
  const round = (value: number, digits: number): number => Number(value.toFixed(digits));
  return {
    rows: rows.map((row) => ({
      target: row.target,
      scenario: row.scenario,
      connections: row.connections,
      ...(row.rate === undefined ? {} : { rate: row.rate }),
      rps: round(row.rps, 1),
      p50_ms: round(row.p50_ms, 3),
      p99_ms: round(row.p99_ms, 3),
      errors: row.errors,
      peak_rss_mb: row.peak_rss_mb === null ? null : round(row.peak_rss_mb, 1),
      cold_start_s: row.cold_start_s === null ? null : round(row.cold_start_s, 3),
    })),
    ...(network === undefined ? {} : { network }),
  };
}

function formatNumber(value: number, digits: number): string {
  return value.toFixed(digits);
}

function formatSigned(value: number, digits: number): string {
  return (value >= 0 ? '+' : '') + value.toFixed(digits);
}

function formatPercent(ratio: number): string {
  return `${(ratio * 100).toFixed(1)}%`;
}

/** Lays out cells as columns: the first `leftColumns` left-aligned, the rest right-aligned. */
export function formatColumns(header: string[], lines: string[][], leftColumns = 2): string {
  const widths = header.map((title, index) =>
    Math.max(title.length, ...lines.map((line) => (line[index] ?? '').length)),
  );
  const render = (cells: string[]): string =>
    cells
      .map((cell, index) => (index < leftColumns ? cell.padEnd(widths[index]!) : cell.padStart(widths[index]!)))
      .join('  ')
      .trimEnd();
  return [render(header), render(widths.map((width) => '-'.repeat(width))), ...lines.map(render)].join('\n');
}

/**
 * The main table: one line per target x scenario x connections (x rate), with the floor comparison of the same run
 * and the CPU split that shows whether the load side kept up.
 */
export function formatTable(reportRows: readonly ReportRow[]): string {
  const rows = reportRows.map((reportRow) => reportRow.row);
  const header = [
    'target',
    'scenario',
    'conns',
    'rate',
    'rps',
    'p50_ms',
    'p99_ms',
    'errors',
    'peak_rss_mb',
    'cold_start_s',
    'rps/floor',
    'p50-floor_ms',
    'cpu0%',
    'cpu1%',
    'wrk%',
    'mock%',
    'target%',
    'other%',
  ];
  const lines = reportRows.map(({ row, load }) => {
    const comparison = row.target === 'floor' ? null : compareToFloor(row, rows);
    return [
      row.target,
      row.scenario,
      String(row.connections),
      row.rate === undefined ? 'max' : String(row.rate),
      formatNumber(row.rps, 0),
      formatNumber(row.p50_ms, 3),
      formatNumber(row.p99_ms, 3),
      String(row.errors),
      row.peak_rss_mb === null ? '-' : formatNumber(row.peak_rss_mb, 1),
      row.cold_start_s === null ? '-' : formatNumber(row.cold_start_s, 3),
      comparison?.rpsRatio == null ? '-' : formatNumber(comparison.rpsRatio, 2),
      comparison?.p50DeltaMs == null ? '-' : formatSigned(comparison.p50DeltaMs, 3),
      load === undefined ? '-' : formatNumber(load.cpu0Percent, 0),
      load === undefined ? '-' : formatNumber(load.cpu1Percent, 0),
      load === undefined ? '-' : formatNumber(load.wrkPercent, 0),
      load === undefined ? '-' : formatNumber(load.mockPercent, 0),
      load === undefined ? '-' : formatNumber(load.targetPercent, 0),
      load === undefined ? '-' : formatNumber(load.otherPercent, 0),
    ];
  });
  return formatColumns(header, lines);
}

/** Above this share of a core taken by processes outside the benchmark, a row is flagged as noisy. */
export const noisyOtherPercent = 10;

/**
 * The load-side evidence: how much faster the mock answers when hit directly than through the floor, and the busiest
 * the load CPU got while floor or torii was measured.
 */
export function formatLoadSide(reportRows: readonly ReportRow[]): string {
  const rows = reportRows.map((reportRow) => reportRow.row);
  const lines: string[] = [];
  const mockChat = findRow(rows, 'mock', 'chat', acceptanceThresholds.throughputConnections, false);
  const floorChat = findRow(rows, 'floor', 'chat', acceptanceThresholds.throughputConnections, false);
  if (mockChat !== undefined && floorChat !== undefined && floorChat.rps > 0) {
    lines.push(
      `mock hit directly (chat, ${mockChat.connections} connections): ${formatNumber(mockChat.rps, 0)} rps = ` +
        `${formatNumber(mockChat.rps / floorChat.rps, 2)}x the floor's ${formatNumber(floorChat.rps, 0)} rps, ` +
        'with wrk and the mock sharing CPU 1',
    );
  }
  for (const target of ['floor', 'torii', 'torii-key'] as const) {
    const measured = reportRows.filter((reportRow) => reportRow.row.target === target && reportRow.load !== undefined);
    if (measured.length === 0) continue;
    const busiest = (pick: (load: LoadSideUsage) => number): number =>
      Math.max(...measured.map((reportRow) => pick(reportRow.load!)));
    lines.push(
      `during ${target} runs: wrk used at most ${formatNumber(
        busiest((load) => load.wrkPercent),
        0,
      )}% of CPU 1, ` +
        `CPU 1 in total (wrk, mock, PostgreSQL, Redis) at most ${formatNumber(
          busiest((load) => load.cpu1Percent),
          0,
        )}%, ` +
        `${target} at most ${formatNumber(
          busiest((load) => load.targetPercent),
          0,
        )}% of CPU 0`,
    );
  }
  for (const row of rows.filter(missedRate)) {
    lines.push(
      `NOTE: ${row.target} ${row.scenario} at ${row.rate} rps delivered only ${formatNumber(row.rps, 0)} rps: ` +
        'it is saturated at that rate, so its latency there includes queueing',
    );
  }
  const noisy = reportRows.filter(
    (reportRow) => reportRow.load !== undefined && reportRow.load.otherPercent > noisyOtherPercent,
  );
  if (noisy.length > 0) {
    const worst = Math.max(...noisy.map((reportRow) => reportRow.load!.otherPercent));
    lines.push(
      `WARNING: other processes on this machine used more than ${noisyOtherPercent}% of a core during ` +
        `${noisy.length} of ${reportRows.length} rows (up to ${formatNumber(worst, 0)}%): those rows are noisy, rerun ` +
        'on a quiet machine before trusting small differences',
    );
  }
  return lines.join('\n');
}

/** The pass/fail summary, one line per threshold and an overall verdict. */
export function formatAcceptance(checks: readonly AcceptanceCheck[]): string {
  const label = { pass: 'PASS', fail: 'FAIL', missing: 'MISSING' } as const;
  const lines = checks.map((check) => `  ${label[check.status].padEnd(7)}  ${check.name}: ${check.detail}`);
  const passed = checks.filter((check) => check.status === 'pass').length;
  const overall = passed === checks.length ? 'PASS' : 'FAIL';
  return [...lines, `  ${overall}: ${passed}/${checks.length} acceptance checks passed`].join('\n');
}

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * Merges the rounds of one target's repeated measurement: the median of rps, p50 and p99 (each on its own), the sum
 * of errors, the highest peak RSS, and the load-side sample of the median-throughput round.
 */
export function medianOfRounds(rounds: readonly ReportRow[]): ReportRow | undefined {
  if (rounds.length <= 1) return rounds[0];
  const byThroughput = [...rounds].sort((left, right) => left.row.rps - right.row.rps);
  const middle = byThroughput[Math.floor(byThroughput.length / 2)]!;
  const peaks = rounds.map((round) => round.row.peak_rss_mb).filter((value): value is number => value !== null);
  return {
    row: {
      ...middle.row,
      rps: median(rounds.map((round) => round.row.rps)),
      p50_ms: median(rounds.map((round) => round.row.p50_ms)),
      p99_ms: median(rounds.map((round) => round.row.p99_ms)),
      errors: rounds.reduce((sum, round) => sum + round.row.errors, 0),
      peak_rss_mb: peaks.length === 0 ? null : Math.max(...peaks),
    },
    ...(middle.load === undefined ? {} : { load: middle.load }),
  };
}
