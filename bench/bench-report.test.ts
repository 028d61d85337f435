import { describe, expect, it } from 'vitest';
import {
  medianOfRounds,
  pairedRounds,
  compareToFloor,
  evaluateAcceptance,
  formatAcceptance,
  formatLoadSide,
  formatTable,
  measurementKey,
  resultsDocument,
  type BenchRow,
  type TargetName,
} from './bench-report.ts';
import { parseWrkOutput } from './bench-wrk.ts';

function row(target: TargetName, overrides: Partial<BenchRow> = {}): BenchRow {
  return {
    target,
    scenario: 'chat',
    connections: 32,
    rps: 10_000,
    p50_ms: 1,
    p99_ms: 2,
    errors: 0,
    peak_rss_mb: 80,
    cold_start_s: 0.2,
    ...overrides,
  };
}

/** A complete run where torii meets every threshold. */
function passingRun(): BenchRow[] {
  return [
    row('mock', { rps: 30_000 }),
    row('floor', { rps: 10_000 }),
    row('torii', { rps: 6_000 }),
    row('floor', { connections: 20, rate: 2_000, p50_ms: 0.5 }),
    row('torii', { connections: 20, rate: 2_000, p50_ms: 0.7 }),
    row('torii', { connections: 10, rps: 5_000 }),
    row('torii', { connections: 100, rps: 5_500, peak_rss_mb: 110 }),
    row('floor', { connections: 100, peak_rss_mb: 90 }),
    row('torii-key', { rps: 5_400, cold_start_s: null }),
    row('torii-key', { connections: 20, rate: 2_000, p50_ms: 0.75, p99_ms: 2.4, cold_start_s: null }),
  ];
}

describe('compareToFloor', () => {
  it('compares with the floor row of the same scenario, connections and rate', () => {
    const rows = passingRun();
    const torii = rows.find((candidate) => candidate.target === 'torii' && candidate.rate === 2_000)!;
    const comparison = compareToFloor(torii, rows);
    expect(comparison.rpsRatio).toBeCloseTo(1);
    expect(comparison.p50DeltaMs).toBeCloseTo(0.2);
    expect(compareToFloor(rows[2]!, rows).rpsRatio).toBeCloseTo(0.6);
  });

  it('returns nulls without a floor row, and no ratio when the floor did nothing', () => {
    expect(compareToFloor(row('torii', { connections: 7 }), passingRun())).toEqual({
      rpsRatio: null,
      p50DeltaMs: null,
    });
    const rows = [row('floor', { rps: 0, p50_ms: 1 }), row('torii', { p50_ms: 1.5 })];
    expect(compareToFloor(rows[1]!, rows)).toEqual({ rpsRatio: null, p50DeltaMs: 0.5 });
  });

  it('keeps fixed-rate and max-throughput rows apart', () => {
    expect(measurementKey({ scenario: 'chat', connections: 20, rate: 2_000 })).not.toBe(
      measurementKey({ scenario: 'chat', connections: 20 }),
    );
  });
});

describe('evaluateAcceptance', () => {
  it('passes every check on a good run', () => {
    const checks = evaluateAcceptance(passingRun());
    expect(checks.map((check) => check.status)).toEqual(['pass', 'pass', 'pass', 'pass', 'pass', 'pass', 'pass']);
    expect(formatAcceptance(checks)).toContain('PASS: 7/7 acceptance checks passed');
    expect(checks[5]!.name).toBe('torii-key throughput >= 90% of torii (chat, 32 connections)');
    expect(checks[5]!.detail).toBe('5400 vs 6000 rps = 90.0%');
    expect(checks[6]!.name).toBe('torii-key p99 within 0.5 ms of torii (chat, fixed rate)');
    expect(checks[6]!.detail).toBe('2.400 vs 2.000 ms at 2000 rps = +0.400 ms');
  });

  it('fails each threshold on its own', () => {
    const statuses = (rows: BenchRow[]) => evaluateAcceptance(rows).map((check) => check.status);
    const change = (predicate: (candidate: BenchRow) => boolean, overrides: Partial<BenchRow>): BenchRow[] =>
      passingRun().map((candidate) => (predicate(candidate) ? { ...candidate, ...overrides } : candidate));
    const toriiMax32 = (candidate: BenchRow) =>
      candidate.target === 'torii' && candidate.connections === 32 && candidate.rate === undefined;
    expect(statuses(change(toriiMax32, { rps: 4_999 }))[0]).toBe('fail');
    expect(
      statuses(
        change((candidate) => candidate.target === 'torii' && candidate.rate !== undefined, { p50_ms: 0.81 }),
      )[1],
    ).toBe('fail');
    expect(statuses(change(toriiMax32, { errors: 1 }))[2]).toBe('fail');
    expect(
      statuses(change((candidate) => candidate.target === 'torii' && candidate.connections === 100, { rps: 4_999 }))[3],
    ).toBe('fail');
    expect(
      statuses(
        change((candidate) => candidate.target === 'torii' && candidate.connections === 10, { peak_rss_mb: 136 }),
      )[4],
    ).toBe('fail');
  });

  it('fails the torii-key checks on their own thresholds and on errors, and leaves the first five alone', () => {
    const statuses = (rows: BenchRow[]) => evaluateAcceptance(rows).map((check) => check.status);
    const change = (predicate: (candidate: BenchRow) => boolean, overrides: Partial<BenchRow>): BenchRow[] =>
      passingRun().map((candidate) => (predicate(candidate) ? { ...candidate, ...overrides } : candidate));
    const keyMax = (candidate: BenchRow) => candidate.target === 'torii-key' && candidate.rate === undefined;
    const keyRate = (candidate: BenchRow) => candidate.target === 'torii-key' && candidate.rate !== undefined;
    expect(statuses(change(keyMax, { rps: 5_399 }))).toEqual(['pass', 'pass', 'pass', 'pass', 'pass', 'fail', 'pass']);
    expect(statuses(change(keyRate, { p99_ms: 2.51 }))).toEqual([
      'pass',
      'pass',
      'pass',
      'pass',
      'pass',
      'pass',
      'fail',
    ]);
    // A refused request (429, 402) answers fast: errors fail the key's check even when its numbers look good.
    const withErrors = evaluateAcceptance(change(keyMax, { rps: 9_000, errors: 3 }));
    expect(withErrors[5]!.status).toBe('fail');
    expect(withErrors[5]!.detail).toContain('3 errors on the torii-key row');
    expect(withErrors[2]!.status).toBe('pass');
    // The torii-key p99 check compares with torii's row at the lowest fixed rate, as the p50 check does.
    const higherRate = [
      ...passingRun(),
      row('torii', { connections: 20, rate: 4_000, p99_ms: 50 }),
      row('torii-key', { connections: 20, rate: 4_000, p99_ms: 10 }),
    ];
    expect(evaluateAcceptance(higherRate)[6]!.detail).toContain('at 2000 rps');
    const noKey = evaluateAcceptance(passingRun().filter((candidate) => candidate.target !== 'torii-key'));
    expect(noKey.map((check) => check.status)).toEqual(['pass', 'pass', 'pass', 'pass', 'pass', 'missing', 'missing']);
    expect(formatAcceptance(noKey)).toContain('FAIL: 5/7');
  });

  it('judges torii-key on rounds paired back to back with torii when there are several', () => {
    const rounds = (target: TargetName, values: [number, number][]) =>
      values.map(([rps, p99]) => ({ row: row(target, { rps, p99_ms: p99 }) }));
    // Drift between rounds: the row medians say 10,115 vs 13,300 (76%), the pairs 116%, 97%, 76% (median 97%).
    const key = rounds('torii-key', [
      [10_622, 13.2],
      [12_949, 9.6],
      [10_115, 19.7],
    ]);
    const master = rounds('torii', [
      [9_135, 33.3],
      [13_352, 9.4],
      [13_300, 8.6],
    ]);
    const paired = pairedRounds(key, master)!;
    expect(paired.paired_rps_ratio).toBeCloseTo(12_949 / 13_352, 6);
    expect(paired.paired_p99_delta_ms).toBeCloseTo(0.2, 6);
    expect(pairedRounds(key.slice(0, 1), master.slice(0, 1))).toBeUndefined();
    expect(pairedRounds(key, master.slice(0, 2))).toBeUndefined();
    const run = passingRun().map((candidate) =>
      candidate.target === 'torii-key' && candidate.rate === undefined
        ? { ...candidate, rps: 4_000, paired_rps_ratio: 0.95 }
        : candidate,
    );
    const check = evaluateAcceptance(run)[5]!;
    expect(check.status).toBe('pass');
    expect(check.detail).toContain('median of the per-round ratios 95.0%');
    const failing = run.map((candidate) =>
      candidate.paired_rps_ratio === undefined ? candidate : { ...candidate, paired_rps_ratio: 0.85 },
    );
    expect(evaluateAcceptance(failing)[5]!.status).toBe('fail');
  });

  it('says when torii could not reach the fixed rate', () => {
    const rows = passingRun().map((candidate) =>
      candidate.target === 'torii' && candidate.rate !== undefined
        ? { ...candidate, rps: 1_200, p50_ms: 9 }
        : candidate,
    );
    const latency = evaluateAcceptance(rows)[1]!;
    expect(latency.status).toBe('fail');
    expect(latency.detail).toContain('reached only 1200 rps: saturated');
    expect(formatLoadSide(rows.map((candidate) => ({ row: candidate })))).toContain(
      'NOTE: torii chat at 2000 rps delivered only 1200 rps',
    );
  });

  it('reports missing rows as missing, which is not a pass', () => {
    const checks = evaluateAcceptance(passingRun().filter((candidate) => candidate.target !== 'torii'));
    expect(checks.every((check) => check.status === 'missing')).toBe(true);
    expect(formatAcceptance(checks)).toContain('FAIL: 0/7');
  });
});

describe('resultsDocument', () => {
  it('writes exactly the contract fields, rounded, with rate only on fixed-rate rows', () => {
    const document = resultsDocument([
      row('torii', { rps: 1234.5678, p50_ms: 0.123456, peak_rss_mb: null }),
      row('floor', { rate: 2_000, connections: 20 }),
    ]);
    expect(Object.keys(document.rows[0]!)).toEqual([
      'target',
      'scenario',
      'connections',
      'rps',
      'p50_ms',
      'p99_ms',
      'errors',
      'peak_rss_mb',
      'cold_start_s',
    ]);
    expect(document.rows[0]).toMatchObject({ rps: 1234.6, p50_ms: 0.123, peak_rss_mb: null });
    expect(document.rows[1]!.rate).toBe(2_000);
    expect(document).not.toHaveProperty('network');
    expect(resultsDocument([], { measurements: [] })).toEqual({ rows: [], network: { measurements: [] } });
  });
});

describe('formatTable and formatLoadSide', () => {
  it('prints one line per row with the floor comparison and flags noisy rows', () => {
    const load = {
      cpu0Percent: 99,
      cpu1Percent: 60,
      wrkPercent: 20,
      mockPercent: 35,
      targetPercent: 97,
      otherPercent: 25,
    };
    const reportRows = passingRun().map((candidate) => ({ row: candidate, load }));
    const table = formatTable(reportRows).split('\n');
    expect(table).toHaveLength(2 + reportRows.length);
    expect(table[0]).toMatch(/^target\s+scenario\s+conns\s+rate\s+rps/);
    expect(table[4]).toMatch(/^torii\s+chat\s+32\s+max\s+6000 .* 0\.60 /);
    const loadSide = formatLoadSide(reportRows);
    expect(loadSide).toContain('30000 rps = 3.00x the floor');
    expect(loadSide).toContain('during torii runs: wrk used at most 20% of CPU 1');
    expect(loadSide).toContain('during torii-key runs: wrk used at most 20% of CPU 1');
    expect(loadSide).toContain('WARNING: other processes');
  });
});

describe('parseWrkOutput', () => {
  it('reads the BENCH_RESULT line and sums every kind of error', () => {
    const stdout = [
      'Running 8s test @ http://127.0.0.1:4000/v1/chat/completions',
      'BENCH_RESULT {"requests":80000,"duration_us":8000000,"bytes":1,"errors":{"connect":1,"read":2,"write":0,' +
        '"status":3,"timeout":4},"latency_us":{"mean":950.5,"max":9000,"p50":900,"p90":1200,"p99":2500,"p999":5000}}',
    ].join('\n');
    const result = parseWrkOutput(stdout);
    expect(result.requestsPerSecond).toBe(10_000);
    expect(result.errors).toBe(10);
    expect(result.latencyMilliseconds.p50).toBe(0.9);
    expect(result.latencyMilliseconds.p99).toBe(2.5);
  });

  it('throws when wrk printed no result', () => {
    expect(() => parseWrkOutput('unable to connect')).toThrow(/BENCH_RESULT/);
  });
});

describe('medianOfRounds', () => {
  it('takes the median of each figure, sums errors and keeps the highest RSS', () => {
    const rounds = [
      { row: row('torii', { rps: 100, p50_ms: 3, p99_ms: 9, errors: 1, peak_rss_mb: 50 }) },
      { row: row('torii', { rps: 300, p50_ms: 1, p99_ms: 7, errors: 0, peak_rss_mb: 70 }) },
      { row: row('torii', { rps: 200, p50_ms: 2, p99_ms: 8, errors: 2, peak_rss_mb: 60 }) },
    ];
    const merged = medianOfRounds(rounds)!.row;
    expect(merged).toMatchObject({ rps: 200, p50_ms: 2, p99_ms: 8, errors: 3, peak_rss_mb: 70 });
    expect(medianOfRounds([])).toBeUndefined();
    expect(medianOfRounds([rounds[0]!])).toBe(rounds[0]);
  });
});
