import type { CrossCheck, LoadSideUsage, ReportRow, TargetSummary } from './bench-report.ts';
import { findRow, measurementKey, missedRate, pairedMedian } from './bench-report.ts';

/**
 * The printed report of `pnpm bench`: one summary table per scenario (a line per target), the table of every
 * measured row, the load-side evidence and the hey cross-check. Pure functions, no I/O (`bench-report.test.ts`).
 */

/** `value` with `digits` decimals, or `-` when null or undefined. */
export function formatNumber(value: number | null | undefined, digits: number): string {
  return value === null || value === undefined ? '-' : value.toFixed(digits);
}

/** `value` with a sign and `digits` decimals, or `-`. */
export function formatSigned(value: number | null | undefined, digits: number): string {
  if (value === null || value === undefined) return '-';
  return (value >= 0 ? '+' : '') + value.toFixed(digits);
}

/** A ratio as a percentage with one decimal. */
export function formatPercent(ratio: number): string {
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

function loadCells(load: LoadSideUsage | undefined): string[] {
  if (load === undefined) return ['-', '-', '-', '-', '-', '-'];
  return [
    load.cpu0Percent,
    load.cpu1Percent,
    load.wrkPercent,
    load.mockPercent,
    load.targetPercent,
    load.otherPercent,
  ].map((value) => value.toFixed(0));
}

const loadHeader = ['cpu0%', 'cpu1%', 'wrk%', 'mock%', 'target%', 'other%'];

/**
 * A scenario's summary table: one line per target (floor, embedded, production, lean, production-master) with max
 * rps and its ratio to the floor, p50/p99 at the fixed rate and p99 minus the floor's, added p50 at concurrency 1, time
 * to first byte (streaming), CPU ms per request, peak RSS and its ratio to the floor, cold start, Redis and Postgres
 * commands per 1,000 requests, errors, and the load-side columns of the max-throughput run.
 */
export function formatScenarioTable(summaries: readonly TargetSummary[], options: { stream: boolean }): string {
  const header = [
    'target',
    'max_rps',
    'x_floor',
    'p50@rate',
    'p99@rate',
    'p99-floor',
    'c1_added_p50',
    ...(options.stream ? ['ttfb_p50', 'ttfb_p99', 'ttfb-floor'] : []),
    'cpu_ms/req@rate',
    'cpu_ms/req@max',
    'peak_rss_mb',
    'rss_x_floor',
    'cold_start_s',
    'redis/1k',
    'pg/1k',
    'errors',
    ...loadHeader,
  ];
  const services = (value: number | null, target: string): string =>
    value === null ? '-' : value === 0 && target !== 'production' ? 'n.a.' : value.toFixed(1);
  const lines = summaries.map((summary) => [
    summary.target,
    formatNumber(summary.maxRps, 0),
    formatNumber(summary.maxRpsRatio, 2),
    formatNumber(summary.rateP50Ms, 3),
    formatNumber(summary.rateP99Ms, 3),
    formatSigned(summary.rateP99MinusFloorMs, 3),
    summary.target === 'production' && summary.keyAddedP50C1Ms !== null
      ? `${formatSigned(summary.addedP50C1Ms, 3)} (key ${formatSigned(summary.keyAddedP50C1Ms, 3)})`
      : formatSigned(summary.addedP50C1Ms, 3),
    ...(options.stream
      ? [
          formatNumber(summary.ttfbP50Ms, 3),
          formatNumber(summary.ttfbP99Ms, 3),
          formatSigned(summary.ttfbMinusFloorMs, 3),
        ]
      : []),
    formatNumber(summary.cpuMsPerRequestAtRate, 3),
    formatNumber(summary.cpuMsPerRequestAtMax, 3),
    formatNumber(summary.peakRssMb, 1),
    formatNumber(summary.peakRssRatio, 2),
    formatNumber(summary.coldStartS, 3),
    services(summary.redisPer1000, summary.target),
    services(summary.postgresPer1000, summary.target),
    String(summary.errors),
    ...loadCells(summary.load),
  ]);
  return formatColumns(header, lines, 1);
}

/**
 * Every measured row: target, scenario, measurement, generator, connections, rate, the medians of its rounds (rps,
 * p50, p99), errors, CPU ms per request, peak RSS, the paired differences of p50 and p99 to the floor's row of the same
 * measurement, and the load-side columns.
 */
export function formatRowsTable(reportRows: readonly ReportRow[]): string {
  const rows = reportRows.map((reportRow) => reportRow.row);
  const header = [
    'target',
    'scenario',
    'measurement',
    'conns',
    'rate',
    'rounds',
    'rps',
    'p50_ms',
    'p99_ms',
    'errors',
    'cpu_ms/req',
    'peak_rss_mb',
    'p50-floor',
    'p99-floor',
    ...loadHeader,
  ];
  const lines = reportRows.map(({ row, load }) => {
    const floor =
      row.target === 'floor'
        ? undefined
        : rows.find((candidate) => candidate.target === 'floor' && measurementKey(candidate) === measurementKey(row));
    return [
      row.target,
      row.scenario,
      row.measurement === row.generator ? row.measurement : `${row.measurement} (${row.generator})`,
      String(row.connections),
      row.rate === undefined ? 'max' : String(row.rate),
      String(row.rounds.length),
      formatNumber(row.rps, 0),
      formatNumber(row.p50_ms, 3),
      formatNumber(row.p99_ms, 3),
      String(row.errors),
      formatNumber(row.cpu_ms_per_request, 3),
      formatNumber(row.peak_rss_mb, 1),
      formatSigned(
        pairedMedian(row, floor, (round) => round.p50_ms, 'difference'),
        3,
      ),
      formatSigned(
        pairedMedian(row, floor, (round) => round.p99_ms, 'difference'),
        3,
      ),
      ...loadCells(load),
    ];
  });
  return formatColumns(header, lines, 3);
}

/** Above this share of a core taken by processes outside the benchmark, a row is flagged as noisy. */
export const noisyOtherPercent = 10;

/**
 * The load-side evidence: how much faster the mock answers when hit directly than through the floor, the busiest the
 * load CPU got while each target was measured, fixed-rate rows that missed their rate, and noisy rows.
 */
export function formatLoadSide(reportRows: readonly ReportRow[]): string {
  const rows = reportRows.map((reportRow) => reportRow.row);
  const lines: string[] = [];
  for (const scenario of ['chat', 'chat-stream']) {
    const mock = findRow(rows, 'mock', 'max', scenario);
    const floor = findRow(rows, 'floor', 'max', scenario);
    if (mock !== undefined && floor !== undefined && floor.rps > 0) {
      lines.push(
        `mock hit directly (${scenario}, ${mock.connections} connections): ${formatNumber(mock.rps, 0)} rps = ` +
          `${formatNumber(mock.rps / floor.rps, 2)}x the floor's ${formatNumber(floor.rps, 0)} rps, ` +
          'with wrk and the mock sharing CPU 1',
      );
    }
  }
  const targets = [...new Set(rows.map((row) => row.target))].filter((target) => target !== 'mock');
  for (const target of targets) {
    const measured = reportRows.filter((reportRow) => reportRow.row.target === target && reportRow.load !== undefined);
    if (measured.length === 0) continue;
    const busiest = (pick: (load: LoadSideUsage) => number): string =>
      formatNumber(Math.max(...measured.map((reportRow) => pick(reportRow.load!))), 0);
    lines.push(
      `during ${target} runs: wrk used at most ${busiest((load) => load.wrkPercent)}% of CPU 1, CPU 1 in total ` +
        `(wrk, mock, PostgreSQL, Redis) at most ${busiest((load) => load.cpu1Percent)}%, ${target} at most ` +
        `${busiest((load) => load.targetPercent)}% of CPU 0`,
    );
  }
  for (const row of rows.filter(missedRate)) {
    lines.push(
      `NOTE: ${row.target} ${row.scenario} at ${row.rate} rps (${row.generator}) delivered only ` +
        `${formatNumber(row.rps, 0)} rps: it is saturated at that rate, so its latency there includes queueing`,
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

/** The hey cross-check side by side with wrk: rps, p50 and p99 of both generators at the same fixed rate. */
export function formatCrossCheck(checks: readonly CrossCheck[]): string {
  if (checks.length === 0) return '  not measured';
  const header = ['target', 'rate', 'wrk_rps', 'hey_rps', 'wrk_p50', 'hey_p50', 'wrk_p99', 'hey_p99', 'hey_errors'];
  const lines = checks.map(({ target, wrk, hey }) => [
    target,
    String(hey.rate ?? '-'),
    formatNumber(wrk?.rps, 0),
    formatNumber(hey.rps, 0),
    formatNumber(wrk?.p50_ms, 3),
    formatNumber(hey.p50_ms, 1),
    formatNumber(wrk?.p99_ms, 3),
    formatNumber(hey.p99_ms, 1),
    String(hey.errors),
  ]);
  return formatColumns(header, lines, 1);
}
