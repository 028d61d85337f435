import { describe, expect, it } from 'vitest';
import { evaluateAcceptance, formatAcceptance } from './bench-checks.ts';
import type { MeasurementKind, TargetName } from './bench-plan.ts';
import {
  crossChecks,
  measurementKey,
  mergeRounds,
  pairedMedian,
  peakRssByShape,
  quietRounds,
  roundRow,
  summarizeScenario,
  summaryDocument,
  type BenchRow,
  type RunResult,
} from './bench-report.ts';
import { formatCrossCheck, formatLoadSide, formatRowsTable, formatScenarioTable } from './bench-tables.ts';
import { parseWrkOutput } from './bench-wrk.ts';

/** A row of three rounds with the same figures (override `rounds` for drift). */
function row(target: TargetName, measurement: MeasurementKind, overrides: Partial<BenchRow> = {}): BenchRow {
  const base: BenchRow = {
    target,
    scenario: 'chat',
    measurement,
    generator: measurement === 'hey' ? 'hey' : measurement === 'first-byte' ? 'first-byte' : 'wrk',
    connections: measurement === 'max' ? 32 : measurement === 'c1' || measurement === 'first-byte' ? 1 : 20,
    ...(measurement === 'rate' || measurement === 'hey' ? { rate: 1_000 } : {}),
    requests: 30_000,
    rps: 10_000,
    p50_ms: 1,
    p99_ms: 2,
    errors: 0,
    cpu_ms_per_request: 0.1,
    peak_rss_mb: 80,
    cold_start_s: target === 'production-master' ? null : 0.2,
    rounds: [],
    ...overrides,
  };
  if (overrides.rounds === undefined) {
    base.rounds = [1, 2, 3].map((round) => ({
      round,
      rps: base.rps,
      p50_ms: base.p50_ms,
      p99_ms: base.p99_ms,
      cpu_ms_per_request: base.cpu_ms_per_request,
    }));
  }
  return base;
}

/** A complete run where every check passes. */
function passingRun(): BenchRow[] {
  const stream = { scenario: 'chat-stream' };
  return [
    row('mock', 'max', { rps: 30_000 }),
    row('floor', 'max', { rps: 10_000 }),
    row('embedded', 'max', { rps: 6_000 }),
    row('production', 'max', { rps: 6_500 }),
    row('lean', 'max', { rps: 8_000 }),
    row('lean-ten', 'max', { rps: 7_700, cold_start_s: null }),
    row('floor', 'rate', { p50_ms: 0.5, p99_ms: 3 }),
    row('embedded', 'rate', { p50_ms: 0.7, p99_ms: 4.5 }),
    row('production', 'rate', { p50_ms: 0.7, p99_ms: 3.8 }),
    row('lean', 'rate', { p50_ms: 0.6, p99_ms: 3.2 }),
    row('floor', 'c1', { p50_ms: 0.3 }),
    row('embedded', 'c1', { p50_ms: 0.4 }),
    row('production', 'c1', { p50_ms: 0.42 }),
    row('production-master', 'c1', { p50_ms: 0.39 }),
    row('lean', 'c1', { p50_ms: 0.35 }),
    row('floor', 'max', { ...stream, rps: 9_000, peak_rss_mb: 100 }),
    row('embedded', 'max', { ...stream, rps: 5_000, peak_rss_mb: 140 }),
    row('production', 'max', { ...stream, rps: 4_600 }),
    row('lean', 'max', { ...stream, rps: 6_000 }),
    row('floor', 'first-byte', { ...stream, p50_ms: 0.5 }),
    row('embedded', 'first-byte', { ...stream, p50_ms: 0.58 }),
    row('production', 'first-byte', { ...stream, p50_ms: 0.6 }),
    row('lean', 'first-byte', { ...stream, p50_ms: 0.55 }),
    row('floor', 'hey', { p50_ms: 0.6, p99_ms: 3.1 }),
  ];
}

const statuses = (rows: BenchRow[]) => evaluateAcceptance(rows).map((check) => check.status);
const change = (predicate: (candidate: BenchRow) => boolean, overrides: Partial<BenchRow>): BenchRow[] =>
  passingRun().map((candidate) =>
    predicate(candidate)
      ? row(candidate.target, candidate.measurement, { ...candidate, rounds: undefined as never, ...overrides })
      : candidate,
  );
const is =
  (target: TargetName, measurement: MeasurementKind, scenario = 'chat') =>
  (candidate: BenchRow): boolean =>
    candidate.target === target && candidate.measurement === measurement && candidate.scenario === scenario;

describe('evaluateAcceptance', () => {
  it('passes every check on a good run, one line per check of the issue', () => {
    const checks = evaluateAcceptance(passingRun());
    expect(checks.map((check) => check.status)).toEqual(Array(16).fill('pass'));
    expect(formatAcceptance(checks)).toContain('PASS: 16/16 acceptance checks passed');
    expect(checks.map((check) => check.name)).toEqual([
      'production max rps >= 0.6x floor (chat)',
      'production p99 at the fixed rate within 1 ms of floor (chat)',
      'virtual key adds <= 0.05 ms p50 at c=1 over the master key (chat, production vs production-master)',
      'embedded max rps within 10% of production (chat)',
      'embedded p99 at the fixed rate within 1 ms of production (chat)',
      'embedded peak RSS <= 1.5x floor',
      'embedded first 200 within 1 s of exec',
      'chat-stream: embedded max rps >= 0.5x floor',
      'chat-stream: production max rps >= 0.5x floor',
      'chat-stream: lean max rps >= 0.5x floor',
      'chat-stream: embedded time to first byte at c=1 within 0.1 ms of floor (p50)',
      'chat-stream: production time to first byte at c=1 within 0.1 ms of floor (p50)',
      'chat-stream: lean time to first byte at c=1 within 0.1 ms of floor (p50)',
      'production peak RSS <= 1.5x floor',
      'lean peak RSS <= 1.5x floor',
      'routing: ten deployments (latency strategy) within 5% of one (lean chat max rps)',
    ]);
    expect(checks[0]!.detail).toBe('6500 vs 10000 rps = 65.0%; median of the per-round ratios 65.0%');
    expect(checks[2]!.detail).toContain('0.420 vs 0.390 ms = +0.030 ms');
  });

  it('fails each threshold on its own', () => {
    const failing = (rows: BenchRow[]) =>
      statuses(rows).flatMap((status, index) => (status === 'pass' ? [] : [`${index}:${status}`]));
    expect(failing(change(is('production', 'max'), { rps: 5_999 }))).toEqual(['0:fail']);
    expect(failing(change(is('production', 'rate'), { p99_ms: 4.01 }))).toEqual(['1:fail']);
    expect(failing(change(is('production', 'c1'), { p50_ms: 0.45 }))).toEqual(['2:fail']);
    expect(failing(change(is('embedded', 'max'), { rps: 5_800 }))).toEqual(['3:fail']);
    expect(failing(change(is('embedded', 'rate'), { p99_ms: 4.9 }))).toEqual(['4:fail']);
    expect(failing(change(is('embedded', 'rate'), { peak_rss_mb: 151 }))).toEqual(['5:fail']);
    expect(failing(change((candidate) => candidate.target === 'embedded', { cold_start_s: 1.2 }))).toEqual(['6:fail']);
    expect(failing(change(is('lean', 'max', 'chat-stream'), { rps: 4_400 }))).toEqual(['9:fail']);
    expect(failing(change(is('production', 'first-byte', 'chat-stream'), { p50_ms: 0.65 }))).toEqual(['11:fail']);
    expect(failing(change(is('production-master', 'c1'), { peak_rss_mb: 160 }))).toEqual(['13:fail']);
    expect(failing(change(is('lean-ten', 'max'), { peak_rss_mb: 160 }))).toEqual(['14:fail']);
    expect(failing(change(is('lean-ten', 'max'), { rps: 7_590 }))).toEqual(['15:fail']);
  });

  it('judges on the per-round pairs, not on row medians from different rounds', () => {
    // Drift: the floor's rounds run at 10k, 6k, 10k; production's at 6.5k, 3.9k, 4k. Row medians: 10k vs 4k (40%),
    // pairs 65%, 65%, 40% (median 65%).
    const rows = passingRun().map((candidate) => {
      if (is('floor', 'max')(candidate)) {
        return row('floor', 'max', {
          rps: 10_000,
          rounds: [10_000, 6_000, 10_000].map((rps, index) => ({
            round: index + 1,
            rps,
            p50_ms: 1,
            p99_ms: 2,
            cpu_ms_per_request: null,
          })),
        });
      }
      if (is('production', 'max')(candidate)) {
        return row('production', 'max', {
          rps: 4_000,
          rounds: [6_500, 3_900, 4_000].map((rps, index) => ({
            round: index + 1,
            rps,
            p50_ms: 1,
            p99_ms: 2,
            cpu_ms_per_request: null,
          })),
        });
      }
      return candidate;
    });
    const check = evaluateAcceptance(rows)[0]!;
    expect(check.status).toBe('pass');
    expect(check.detail).toBe('4000 vs 10000 rps = 40.0%; median of the per-round ratios 65.0%');
  });

  it('judges p99 at the fixed rate on the quiet rounds (steal <= 1%) when there are two or more', () => {
    // Rounds 2 and 4 ran while the hypervisor took 6-9% of a CPU: production's p99 +5 and +6 ms there, +0.5 and +0.7
    // in the quiet ones. Every round's median (+2.85) fails; the quiet rounds' (+0.6) pass.
    const rate = (target: TargetName, p99s: number[], steals: (number | undefined)[]): BenchRow =>
      row(target, 'rate', {
        rounds: p99s.map((p99, index) => ({
          round: index + 1,
          rps: 1_000,
          p50_ms: 0.6,
          p99_ms: p99,
          cpu_ms_per_request: 0.4,
          ...(steals[index] === undefined ? {} : { steal_percent: steals[index] }),
        })),
      });
    const withRate = (floor: BenchRow, production: BenchRow): BenchRow[] =>
      passingRun().map((candidate) =>
        is('floor', 'rate')(candidate) ? floor : is('production', 'rate')(candidate) ? production : candidate,
      );
    const floor = rate('floor', [2, 8, 2, 9], [0.3, 6, 0.5, 9]);
    const production = rate('production', [2.5, 13, 2.7, 15], [0.4, 7, 0.2, 8]);
    const quiet = evaluateAcceptance(withRate(floor, production))[1]!;
    expect(quiet.status).toBe('pass');
    expect(quiet.detail).toContain('median of the differences in the 2 quiet rounds (steal <= 1%) +0.600 ms');
    expect(quiet.detail).toContain('round 2 +5.000 ms (steal 7.0%)');
    // One quiet round is too few: judged on every round, and it says so.
    const noisy = evaluateAcceptance(withRate(floor, rate('production', [2.5, 13, 2.7, 15], [0.4, 7, 1.5, 8])))[1]!;
    expect(noisy.status).toBe('fail');
    expect(noisy.detail).toContain('median of the per-round differences +2.850 ms');
    expect(noisy.detail).toContain('(1 quiet: judged on every round)');
    // Runs without a steal reading (older results) are judged as before.
    const unread = evaluateAcceptance(
      withRate(rate('floor', [2, 2, 2], []), rate('production', [2.5, 2.5, 2.5], [])),
    )[1]!;
    expect(unread.status).toBe('pass');
    expect(unread.detail).toContain('round 1 +0.500 ms (steal -)');
  });

  it("leaves out the rounds in which the floor's p99 was above production's, and is inconclusive when that is every one", () => {
    const rate = (target: TargetName, p99s: number[]): BenchRow =>
      row(target, 'rate', {
        rounds: p99s.map((p99, index) => ({
          round: index + 1,
          rps: 1_000,
          p50_ms: 0.4,
          p99_ms: p99,
          cpu_ms_per_request: 0.3,
          steal_percent: 0,
        })),
      });
    const withRate = (floor: BenchRow, production: BenchRow): BenchRow[] =>
      passingRun().map((candidate) =>
        is('floor', 'rate')(candidate) ? floor : is('production', 'rate')(candidate) ? production : candidate,
      );
    // A floor at 21.7 ms beside production's 3.05 (seen on a disturbed machine) is not a floor: its -18.6 ms would pass.
    const broken = evaluateAcceptance(
      withRate(rate('floor', [21.7, 11.6, 23.3]), rate('production', [3.05, 3, 3.2])),
    )[1]!;
    expect(broken.status).toBe('inconclusive');
    expect(broken.detail).toContain(
      'the floor was slower than production in round 1, 2, 3 (21.700, 11.600, 23.300 ms)',
    );
    expect(formatAcceptance([broken])).toContain('INCONCLUSIVE');
    expect(formatAcceptance([broken])).toContain('FAIL: 0/1');
    // One disturbed round of three: judged on the other two, where production is 1.5 and 1.7 ms above the floor.
    const oneOff = evaluateAcceptance(withRate(rate('floor', [1, 30, 1]), rate('production', [2.5, 3, 2.7])))[1]!;
    expect(oneOff.status).toBe('fail');
    expect(oneOff.detail).toContain('median of the differences in the 2 quiet rounds (steal <= 1%) +1.600 ms');
    expect(oneOff.detail).toContain(
      'the floor was slower than production in round 2 (30.000 ms): a disturbed floor, left out',
    );
    // An equal p99 is no sign of a disturbed floor.
    const equal = evaluateAcceptance(withRate(rate('floor', [2, 2, 2]), rate('production', [2, 2, 2])))[1]!;
    expect(equal.status).toBe('pass');
    expect(equal.detail).not.toContain('disturbed');
  });

  it('judges time to first byte on the step-by-step pairs with the floor when the runs have them', () => {
    // The row medians say +0.5 ms (the floor's runs were on a fast minute); the pairs measured beside the floor in
    // each run say +0.04, +0.06, +0.3: median +0.06, over the 0.1 ms allowed only when the pairs say so.
    const stepwise = (differences: number[]) =>
      change(is('lean', 'first-byte', 'chat-stream'), {
        p50_ms: 1,
        rounds: differences.map((difference, index) => ({
          round: index + 1,
          rps: 500,
          p50_ms: 1,
          p99_ms: 2,
          cpu_ms_per_request: 0.1,
          paired_difference_p50_ms: difference,
        })),
      });
    const passing = evaluateAcceptance(stepwise([0.04, 0.06, 0.3]))[12]!;
    expect(passing.status).toBe('pass');
    expect(passing.detail).toContain('step-by-step differences (each request beside one to the floor) +0.060 ms');
    expect(evaluateAcceptance(stepwise([0.2, 0.12, 0.01]))[12]!.status).toBe('fail');
    const summary = summarizeScenario(
      stepwise([0.04, 0.06, 0.3]).map((candidate) => ({ row: candidate })),
      'chat-stream',
    );
    expect(summary.find((line) => line.target === 'lean')!.ttfbMinusFloorMs).toBeCloseTo(0.06, 9);
  });

  it('judges the virtual key on the key-pair row (each request beside one with the master key) when the run has it', () => {
    // The c1 rows say +0.2 ms (production-master's run was on a fast stretch); the pairs say +0.01, +0.03, +0.09.
    const withPairs = (differences: number[]): BenchRow[] => [
      ...change(is('production', 'c1'), { p50_ms: 0.9 }),
      row('production', 'first-byte', {
        paired_with: 'production-master',
        requests: 6_000,
        rounds: differences.map((difference, index) => ({
          round: index + 1,
          rps: 400,
          p50_ms: 1,
          p99_ms: 2,
          cpu_ms_per_request: 0.2,
          paired_difference_p50_ms: difference,
        })),
      }),
    ];
    expect(evaluateAcceptance(change(is('production', 'c1'), { p50_ms: 0.9 }))[2]!.status).toBe('fail');
    const passing = evaluateAcceptance(withPairs([0.01, 0.03, 0.09]))[2]!;
    expect(passing.status).toBe('pass');
    expect(passing.detail).toBe(
      'median over the rounds of the step-by-step differences (each request with the virtual key beside one with the ' +
        'master key, 6000 pairs) +0.030 ms; per round +0.010, +0.030, +0.090',
    );
    expect(evaluateAcceptance(withPairs([0.06, 0.02, 0.07]))[2]!.status).toBe('fail');
    const summary = summarizeScenario(
      withPairs([0.01, 0.03, 0.09]).map((candidate) => ({ row: candidate })),
      'chat',
    );
    const production = summary.find((line) => line.target === 'production')!;
    expect(production.keyAddedP50C1Ms).toBeCloseTo(0.03, 9);
    // The key-pair row is no time to first byte against the floor.
    expect(production.ttfbP50Ms).toBeNull();
  });

  it('fails a check whose rows have errors, and notes a missed rate', () => {
    const withErrors = evaluateAcceptance(change(is('production', 'c1'), { errors: 3 }))[2]!;
    expect(withErrors.status).toBe('fail');
    expect(withErrors.detail).toContain('3 errors on these rows');
    const saturated = evaluateAcceptance(change(is('production', 'rate'), { rps: 700, p99_ms: 90 }))[1]!;
    expect(saturated.detail).toContain('production reached only 700 rps (saturated');
  });

  it('reports missing rows as missing, which is not a pass', () => {
    const checks = evaluateAcceptance(passingRun().filter((candidate) => !candidate.target.startsWith('production')));
    expect(checks.filter((check) => check.status === 'missing')).toHaveLength(8);
    expect(formatAcceptance(checks)).toContain('FAIL: 8/16');
  });
});

describe('mergeRounds and pairedMedian', () => {
  const run = (round: number, rps: number, p50: number, overrides: Partial<RunResult> = {}): RunResult => ({
    round,
    rps,
    p50_ms: p50,
    p99_ms: p50 * 3,
    cpu_ms_per_request: rps / 100_000,
    requests: rps,
    errors: 0,
    peakRssMb: 50 + round,
    ...overrides,
  });
  const identity = { target: 'lean', scenario: 'chat', measurement: 'max', generator: 'wrk', connections: 32 } as const;

  it('takes the median of each figure, sums requests and errors, keeps the highest RSS and every round', () => {
    const merged = mergeRounds(
      identity,
      [run(1, 100, 3, { errors: 1 }), run(2, 300, 1), run(3, 200, 2, { errors: 2 })],
      0.3,
    )!;
    expect(merged.row).toMatchObject({
      rps: 200,
      p50_ms: 2,
      p99_ms: 6,
      errors: 3,
      requests: 600,
      peak_rss_mb: 53,
      cpu_ms_per_request: 0.002,
      cold_start_s: 0.3,
    });
    expect(merged.row.rounds.map((each) => each.round)).toEqual([1, 2, 3]);
    expect(mergeRounds(identity, [], null)).toBeUndefined();
  });

  it('pairs rounds by number and skips rounds only one side ran', () => {
    const shape = mergeRounds(identity, [run(1, 100, 1.5), run(2, 300, 1.2), run(3, 200, 1.9)], null)!.row;
    const floor = mergeRounds({ ...identity, target: 'floor' }, [run(1, 200, 1), run(3, 250, 1.1)], null)!.row;
    expect(pairedMedian(shape, floor, (round) => round.rps, 'ratio')).toBeCloseTo((0.5 + 0.8) / 2, 9);
    expect(pairedMedian(shape, floor, (round) => round.p50_ms, 'difference')).toBeCloseTo(0.65, 9);
    expect(pairedMedian(shape, undefined, (round) => round.rps, 'ratio')).toBeUndefined();
    // Only the listed rounds: round 3 alone.
    expect(pairedMedian(shape, floor, (round) => round.rps, 'ratio', new Set([3]))).toBeCloseTo(0.8, 9);
  });

  it("keeps each round's steal, and finds the rounds where every run was quiet", () => {
    const merged = mergeRounds(identity, [run(1, 100, 1, { steal_percent: 0.25 }), run(2, 100, 1)], null)!.row;
    expect(merged.rounds.map((each) => each.steal_percent)).toEqual([0.25, undefined]);
    expect(
      roundRow({ ...merged, rounds: [{ ...merged.rounds[0]!, steal_percent: 0.123_456 }] }).rounds[0],
    ).toMatchObject({
      steal_percent: 0.12,
    });
    const floor = [1, 2, 3, 4].map((round) => ({ round, steal_percent: [0.2, 3, 0.9, 0.1][round - 1] }));
    const production = [1, 2, 3, 4].map((round) => ({ round, steal_percent: [0.4, 0.3, 1, 1.01][round - 1] }));
    // Round 2: the floor's run was disturbed; round 4: production's; a run without a reading is not quiet.
    expect(quietRounds([floor, production], 1)).toEqual([1, 3]);
    expect(quietRounds([floor, [{ round: 1 }]], 1)).toEqual([3, 4]);
    expect(quietRounds([], 1)).toEqual([]);
  });
});

describe('summarizeScenario and the tables', () => {
  it('summarizes each target with the paired comparisons, the key cost and the services counts', () => {
    const reportRows = passingRun().map((candidate) => ({ row: candidate }));
    const chat = summarizeScenario(reportRows, 'chat', [
      { scenario: 'chat', redisCommandsPer1000: 5.5, postgresTransactionsPer1000: 2.1 },
    ]);
    expect(chat.map((line) => line.target)).toEqual([
      'floor',
      'embedded',
      'production',
      'lean',
      'production-master',
      'lean-ten',
    ]);
    const production = chat.find((line) => line.target === 'production')!;
    expect(production).toMatchObject({ maxRps: 6_500, redisPer1000: 5.5, postgresPer1000: 2.1 });
    expect(production.maxRpsRatio).toBeCloseTo(0.65, 9);
    expect(production.rateP99MinusFloorMs).toBeCloseTo(0.8, 9);
    expect(production.addedP50C1Ms).toBeCloseTo(0.12, 9);
    expect(production.keyAddedP50C1Ms).toBeCloseTo(0.03, 9);
    expect(chat.find((line) => line.target === 'lean')).toMatchObject({ redisPer1000: 0, postgresPer1000: 0 });
    expect(chat.find((line) => line.target === 'floor')).toMatchObject({ maxRpsRatio: null, redisPer1000: null });
    expect(summaryDocument(production)).toMatchObject({ max_rps: 6_500, c1_key_added_p50_ms: 0.03 });

    const stream = summarizeScenario(reportRows, 'chat-stream');
    expect(stream.find((line) => line.target === 'embedded')!.ttfbMinusFloorMs).toBeCloseTo(0.08, 9);
    const table = formatScenarioTable(stream, { stream: true }).split('\n');
    expect(table[0]).toMatch(/^target\s+max_rps\s+x_floor\s+p50@rate\s+p99@rate\s+p99-floor\s+c1_added_p50\s+ttfb_p50/);
    expect(table.find((line) => line.startsWith('lean'))).toMatch(/n\.a\.\s+n\.a\./);
    expect(formatScenarioTable(chat, { stream: false })).toContain('+0.120 (key +0.030)');
  });

  it('prints every row with its paired floor differences, the load side and the hey cross-check', () => {
    const load = {
      cpu0Percent: 99,
      cpu1Percent: 60,
      wrkPercent: 20,
      mockPercent: 35,
      targetPercent: 97,
      otherPercent: 25,
    };
    const rows = [...passingRun(), row('production', 'hey', { p50_ms: 0.7, p99_ms: 3.9, rps: 990 })];
    const reportRows = rows.map((candidate) => ({ row: candidate, load }));
    const table = formatRowsTable(reportRows).split('\n');
    expect(table).toHaveLength(2 + reportRows.length);
    expect(table.find((line) => /^production\s+chat\s+rate/.test(line))).toMatch(/\+0\.200\s+\+0\.800/);
    const loadSide = formatLoadSide(reportRows);
    expect(loadSide).toContain('30000 rps = 3.00x the floor');
    expect(loadSide).toContain('during production-master runs: wrk used at most 20% of CPU 1');
    expect(loadSide).toContain('WARNING: other processes');
    const checks = crossChecks(rows);
    expect(checks.map((each) => [each.target, each.wrk?.p99_ms, each.hey.p99_ms])).toEqual([
      ['floor', 3, 3.1],
      ['production', 3.8, 3.9],
    ]);
    expect(formatCrossCheck(checks)).toMatch(/production\s+1000\s+10000\s+990\s+0\.700\s+0\.7\s+3\.800\s+3\.9\s+0/);
  });

  it("reports each shape's highest peak RSS, production-master counted as production", () => {
    const rows = change(is('production-master', 'c1'), { peak_rss_mb: 120 });
    expect(peakRssByShape(rows)).toEqual([
      { target: 'floor', peakRssMb: 100 },
      { target: 'embedded', peakRssMb: 140 },
      { target: 'production', peakRssMb: 120 },
      { target: 'lean', peakRssMb: 80 },
    ]);
  });
});

describe('roundRow', () => {
  it('writes the contract fields in order, rounded, with rate only on fixed-rate rows', () => {
    const written = roundRow(row('lean', 'max', { rps: 1234.5678, p50_ms: 0.123456, peak_rss_mb: null }));
    expect(Object.keys(written)).toEqual([
      'target',
      'scenario',
      'measurement',
      'generator',
      'connections',
      'requests',
      'rps',
      'p50_ms',
      'p99_ms',
      'errors',
      'cpu_ms_per_request',
      'peak_rss_mb',
      'cold_start_s',
      'rounds',
    ]);
    expect(written).toMatchObject({ rps: 1234.6, p50_ms: 0.123, peak_rss_mb: null });
    expect(written.rounds[0]).toEqual({ round: 1, rps: 1234.6, p50_ms: 0.123, p99_ms: 2, cpu_ms_per_request: 0.1 });
    expect(roundRow(row('floor', 'rate')).rate).toBe(1_000);
    expect(measurementKey(row('floor', 'rate'))).not.toBe(measurementKey(row('floor', 'hey')));
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
