import { quietStealPercent, type ShapeName, type TargetName } from './bench-plan.ts';
import type { BenchRow, RoundResult } from './bench-report.ts';
import {
  findRow,
  firstByteOverBase,
  keyPairRow,
  missedRate,
  pairedMedian,
  peakRssByShape,
  quietRounds,
} from './bench-report.ts';
import { formatNumber, formatPercent, formatSigned } from './bench-tables.ts';

/**
 * The acceptance checks of `pnpm bench`, the issue's "done when" list ("Close to the floor in every shape people
 * run"), judged on one run's rows. Comparisons between two targets use the median of their per-round ratios or
 * differences (the two ran within seconds of each other in every round, so the machine's drift cancels out); the row
 * medians are printed beside them. A check whose rows have errors fails (a refused request answers fast and would
 * flatter the numbers); one whose rows are missing reports `MISSING`, which is not a pass. Pure functions, no I/O.
 */

/** The outcome of one check. */
export interface AcceptanceCheck {
  name: string;
  /** `inconclusive`: measured, but the base was disturbed in every round that could be judged; not a pass. */
  status: 'pass' | 'fail' | 'missing' | 'inconclusive';
  detail: string;
}

/** The thresholds of the checks. */
export const acceptanceThresholds = {
  /** production max rps (chat, 32 connections) at least this share of the floor's. */
  productionThroughputRatio: 0.6,
  /** production p99 at the fixed rate (chat) at most this many ms above the floor's. */
  productionP99DeltaMs: 1,
  /** The virtual key's added p50 at concurrency 1 (chat), production against production-master. */
  keyAddedP50Ms: 0.05,
  /** embedded max rps (chat) at least this share of production's. */
  embeddedThroughputRatio: 0.9,
  /** embedded p99 at the fixed rate (chat) at most this many ms above production's. */
  embeddedP99DeltaMs: 1,
  /** Exec to the first 200 of the embedded shape. */
  embeddedColdStartSeconds: 1,
  /** Every shape's max rps (chat-stream) at least this share of the floor's. */
  streamThroughputRatio: 0.5,
  /** Every shape's time to first byte at concurrency 1 (chat-stream) at most this many ms above the floor's. */
  streamTtfbDeltaMs: 0.1,
  /** Every shape's peak RSS (the highest of its rows) at most this multiple of the floor's. */
  rssRatio: 1.5,
  /** lean's max rps (chat) with ten deployments (latency strategy) at least this share of its rps with one. */
  routingThroughputRatio: 0.95,
} as const;

const verdict = (passed: boolean): 'pass' | 'fail' => (passed ? 'pass' : 'fail');

function errorsNote(rows: readonly (BenchRow | undefined)[]): { errors: number; note: string } {
  const errors = rows.reduce((sum, row) => sum + (row?.errors ?? 0), 0);
  return { errors, note: errors === 0 ? '' : `; ${errors} errors on these rows` };
}

function saturationNote(rows: readonly (BenchRow | undefined)[]): string {
  const saturated = rows.filter((row): row is BenchRow => row !== undefined && missedRate(row));
  return saturated
    .map((row) => `; ${row.target} reached only ${formatNumber(row.rps, 0)} rps (saturated: includes queueing)`)
    .join('');
}

/**
 * A throughput ratio check: `row` against `base` on max rps, judged on the median of the per-round ratios (the row
 * medians' ratio when the two share no round).
 */
function ratioCheck(
  name: string,
  row: BenchRow | undefined,
  base: BenchRow | undefined,
  minimum: number,
): AcceptanceCheck {
  if (row === undefined || base === undefined || base.rps <= 0) {
    return { name, status: 'missing', detail: `not measured: ${row === undefined ? 'the shape' : 'the base'} row` };
  }
  const rowRatio = row.rps / base.rps;
  const paired = pairedMedian(row, base, (round) => round.rps, 'ratio');
  const ratio = paired ?? rowRatio;
  const { errors, note } = errorsNote([row, base]);
  return {
    name,
    status: verdict(ratio >= minimum && errors === 0),
    detail:
      `${formatNumber(row.rps, 0)} vs ${formatNumber(base.rps, 0)} rps = ${formatPercent(rowRatio)}` +
      (paired === undefined ? '' : `; median of the per-round ratios ${formatPercent(paired)}`) +
      note,
  };
}

/**
 * A latency difference check: `pick(row) - pick(base)` at most `maximum` ms, judged on the median of the per-round
 * differences (the row medians' difference when the two share no round). With `quiet`, on the rounds in which neither
 * run had more than {@link quietStealPercent}% steal, when there are at least two of them; the detail lists every
 * round's difference and steal either way. With `floorBase` (the base is the floor), a round in which the floor came
 * out slower than the row is left out: the least a proxy can do cannot take longer than the gateway, so that round
 * measured a disturbance of the floor's run (seen at 1,000 rps as a floor p99 of 11-55 ms beside a gateway's 3-5 ms,
 * with no steal), and its negative difference would pass the check on it. When every round is left out the check is
 * `inconclusive`.
 */
function differenceCheck(
  name: string,
  row: BenchRow | undefined,
  base: BenchRow | undefined,
  pick: (round: Pick<RoundResult, 'p50_ms' | 'p99_ms'>) => number,
  maximum: number,
  quiet = false,
  floorBase = false,
): AcceptanceCheck {
  if (row === undefined || base === undefined) {
    return { name, status: 'missing', detail: `not measured: ${row === undefined ? 'the shape' : 'the base'} row` };
  }
  const rowDelta = pick(row) - pick(base);
  const quietOnes = quiet ? quietRounds([row.rounds, base.rounds], quietStealPercent) : [];
  let judged = quietOnes.length >= 2 ? new Set(quietOnes) : undefined;
  // The rounds it would be judged on, and those of them in which the floor was slower than the row.
  const candidates = row.rounds
    .map((round) => round.round)
    .filter((round) => judged === undefined || judged.has(round));
  const disturbed = floorBase
    ? candidates.filter((round) => pickRound(base, round, pick) > pickRound(row, round, pick))
    : [];
  let disturbedNote = '';
  if (disturbed.length > 0) {
    judged = new Set(candidates.filter((round) => !disturbed.includes(round)));
    disturbedNote =
      `; the floor was slower than ${row.target} in round ${disturbed.join(', ')} ` +
      `(${disturbed.map((round) => formatNumber(pickRound(base, round, pick), 3)).join(', ')} ms): ` +
      `a disturbed floor, left out`;
    if (judged.size === 0) {
      return {
        name,
        status: 'inconclusive',
        detail:
          `${formatNumber(pick(row), 3)} vs ${formatNumber(pick(base), 3)} ms = ${formatSigned(rowDelta, 3)} ms` +
          `${disturbedNote}, which leaves no round to judge: run the bench again on a quieter machine`,
      };
    }
  }
  const paired = pairedMedian(row, base, pick, 'difference', judged);
  const delta = paired ?? rowDelta;
  const { errors, note } = errorsNote([row, base]);
  return {
    name,
    status: verdict(delta <= maximum && errors === 0),
    detail:
      `${formatNumber(pick(row), 3)} vs ${formatNumber(pick(base), 3)} ms = ${formatSigned(rowDelta, 3)} ms` +
      (paired === undefined
        ? ''
        : judged === undefined
          ? `; median of the per-round differences ${formatSigned(paired, 3)} ms`
          : `; median of the differences in the ${judged.size} ` +
            `${quietOnes.length >= 2 ? `quiet rounds (steal <= ${quietStealPercent}%) ` : 'rounds judged '}` +
            `${formatSigned(paired, 3)} ms`) +
      (quiet ? roundsNote(row, base, pick, quietOnes.length) : '') +
      disturbedNote +
      saturationNote([row, base]) +
      note,
  };
}

/** The `pick` of `rows`'s round `round` (NaN when it has none). */
function pickRound(
  rows: BenchRow,
  round: number,
  pick: (round: Pick<RoundResult, 'p50_ms' | 'p99_ms'>) => number,
): number {
  const found = rows.rounds.find((candidate) => candidate.round === round);
  return found === undefined ? Number.NaN : pick(found);
}

/** Each round's difference with the larger steal of its two runs: `round 1 +0.4 ms (steal 0.3%)`. */
function roundsNote(
  row: BenchRow,
  base: BenchRow,
  pick: (round: Pick<RoundResult, 'p50_ms' | 'p99_ms'>) => number,
  quietCount: number,
): string {
  const rounds = row.rounds.flatMap((round) => {
    const other = base.rounds.find((candidate) => candidate.round === round.round);
    if (other === undefined) return [];
    const steal =
      round.steal_percent === undefined || other.steal_percent === undefined
        ? '-'
        : `${formatNumber(Math.max(round.steal_percent, other.steal_percent), 1)}%`;
    return [`round ${round.round} ${formatSigned(pick(round) - pick(other), 3)} ms (steal ${steal})`];
  });
  const fallback = quietCount >= 2 ? '' : ` (${quietCount} quiet: judged on every round)`;
  return `; ${rounds.join(', ')}${fallback}`;
}

/**
 * The virtual key's check from the key-pair row: production's chat requests with the virtual key, each step beside one
 * with the master key on the same process; the median over the rounds of the per-step median differences, at most
 * `maximum` ms.
 */
function keyPairCheck(name: string, row: BenchRow, maximum: number): AcceptanceCheck {
  const added = firstByteOverBase(row, undefined);
  if (added === undefined || !added.stepwise) {
    return { name, status: 'missing', detail: 'not measured: the key-pair rounds have no step-by-step differences' };
  }
  const { errors, note } = errorsNote([row]);
  return {
    name,
    status: verdict(added.ms <= maximum && errors === 0),
    detail:
      `median over the rounds of the step-by-step differences (each request with the virtual key beside one with ` +
      `the master key, ${row.requests} pairs) ${formatSigned(added.ms, 3)} ms; per round ` +
      row.rounds.map((round) => formatSigned(round.paired_difference_p50_ms ?? null, 3)).join(', ') +
      note,
  };
}

/**
 * The time-to-first-byte check of a shape: its added p50 over the floor, from the step-by-step pairs of its runs when
 * it has them (see {@link firstByteOverBase}), at most `maximum` ms.
 */
function firstByteCheck(
  name: string,
  row: BenchRow | undefined,
  floor: BenchRow | undefined,
  maximum: number,
): AcceptanceCheck {
  const added = firstByteOverBase(row, floor);
  if (row === undefined || floor === undefined || added === undefined) {
    return { name, status: 'missing', detail: `not measured: ${row === undefined ? 'the shape' : 'the floor'} row` };
  }
  const { errors, note } = errorsNote([row, floor]);
  return {
    name,
    status: verdict(added.ms <= maximum && errors === 0),
    detail:
      `${formatNumber(row.p50_ms, 3)} vs ${formatNumber(floor.p50_ms, 3)} ms = ${formatSigned(row.p50_ms - floor.p50_ms, 3)} ms; ` +
      (added.stepwise
        ? `median over the rounds of the step-by-step differences (each request beside one to the floor) ${formatSigned(added.ms, 3)} ms`
        : `median of the per-round differences ${formatSigned(added.ms, 3)} ms`) +
      note,
  };
}

/**
 * Evaluates the checks:
 *
 * 1. production max rps >= 0.6x the floor's (chat, 32 connections);
 * 2. production p99 at the fixed rate within 1 ms of the floor's (chat);
 * 3. the virtual key adds <= 0.05 ms of p50 at concurrency 1 (chat; production against production-master, step by step
 *    on the key-pair row when the run has it, else the c1 rows' per-round differences);
 * 4. embedded max rps within 10% of production's, i.e. >= 0.9x (chat);
 * 5. embedded p99 at the fixed rate within 1 ms of production's (chat);
 * 6. embedded peak RSS <= 1.5x the floor's;
 * 7. embedded first 200 within 1 s of exec;
 * 8. per shape: max rps >= 0.5x the floor's (chat-stream);
 * 9. per shape: time to first byte p50 at concurrency 1 within 0.1 ms of the floor's (chat-stream), judged on the
 *    step-by-step pairs with the floor when the runs have them;
 * 10. per shape: peak RSS (the highest of its rows, production-master's included in production's) <= 1.5x the floor's;
 * 11. routing costs nothing measurable on a healthy group: lean's max rps (chat) with a group of ten deployments under
 *     the latency strategy (`lean-ten`) within 5% of its max rps with one deployment, round by round.
 */
export function evaluateAcceptance(rows: readonly BenchRow[]): AcceptanceCheck[] {
  const t = acceptanceThresholds;
  const row = (target: TargetName, kind: BenchRow['measurement'], scenario = 'chat'): BenchRow | undefined =>
    findRow(rows, target, kind, scenario);
  const p50 = (round: Pick<RoundResult, 'p50_ms'>): number => round.p50_ms;
  const p99 = (round: Pick<RoundResult, 'p99_ms'>): number => round.p99_ms;
  const keyPair = keyPairRow(rows);
  const keyCheckName = `virtual key adds <= ${t.keyAddedP50Ms} ms p50 at c=1 over the master key (chat, production vs production-master)`;
  const checks: AcceptanceCheck[] = [
    ratioCheck(
      `production max rps >= ${t.productionThroughputRatio}x floor (chat)`,
      row('production', 'max'),
      row('floor', 'max'),
      t.productionThroughputRatio,
    ),
    differenceCheck(
      `production p99 at the fixed rate within ${t.productionP99DeltaMs} ms of floor (chat)`,
      row('production', 'rate'),
      row('floor', 'rate'),
      p99,
      t.productionP99DeltaMs,
      true,
      true,
    ),
    keyPair === undefined
      ? differenceCheck(keyCheckName, row('production', 'c1'), row('production-master', 'c1'), p50, t.keyAddedP50Ms)
      : keyPairCheck(keyCheckName, keyPair, t.keyAddedP50Ms),
    ratioCheck(
      `embedded max rps within ${Math.round((1 - t.embeddedThroughputRatio) * 100)}% of production (chat)`,
      row('embedded', 'max'),
      row('production', 'max'),
      t.embeddedThroughputRatio,
    ),
    differenceCheck(
      `embedded p99 at the fixed rate within ${t.embeddedP99DeltaMs} ms of production (chat)`,
      row('embedded', 'rate'),
      row('production', 'rate'),
      p99,
      t.embeddedP99DeltaMs,
      true,
    ),
  ];
  const rss = peakRssByShape(rows);
  const floorRss = rss.find((each) => each.target === 'floor')?.peakRssMb ?? null;
  const rssCheck = (shape: ShapeName): AcceptanceCheck => {
    const name = `${shape} peak RSS <= ${t.rssRatio}x floor`;
    const mine = rss.find((each) => each.target === shape)?.peakRssMb ?? null;
    if (mine === null || floorRss === null || floorRss <= 0) {
      return { name, status: 'missing', detail: `not measured: ${mine === null ? shape : 'floor'} peak RSS` };
    }
    return {
      name,
      status: verdict(mine <= t.rssRatio * floorRss),
      detail: `${formatNumber(mine, 1)} vs ${formatNumber(floorRss, 1)} MB = ${formatNumber(mine / floorRss, 2)}x`,
    };
  };
  checks.push(rssCheck('embedded'));
  const coldName = `embedded first 200 within ${t.embeddedColdStartSeconds} s of exec`;
  const cold = rows.find(
    (candidate) => candidate.target === 'embedded' && candidate.cold_start_s !== null,
  )?.cold_start_s;
  checks.push(
    cold === undefined || cold === null
      ? { name: coldName, status: 'missing', detail: 'not measured: embedded did not start' }
      : {
          name: coldName,
          status: verdict(cold <= t.embeddedColdStartSeconds),
          detail: `${formatNumber(cold, 3)} s from exec to the first chat 200`,
        },
  );
  for (const shape of ['embedded', 'production', 'lean'] as const) {
    checks.push(
      ratioCheck(
        `chat-stream: ${shape} max rps >= ${t.streamThroughputRatio}x floor`,
        row(shape, 'max', 'chat-stream'),
        row('floor', 'max', 'chat-stream'),
        t.streamThroughputRatio,
      ),
    );
  }
  for (const shape of ['embedded', 'production', 'lean'] as const) {
    checks.push(
      firstByteCheck(
        `chat-stream: ${shape} time to first byte at c=1 within ${t.streamTtfbDeltaMs} ms of floor (p50)`,
        row(shape, 'first-byte', 'chat-stream'),
        row('floor', 'first-byte', 'chat-stream'),
        t.streamTtfbDeltaMs,
      ),
    );
  }
  for (const shape of ['production', 'lean'] as const) checks.push(rssCheck(shape));
  checks.push(
    ratioCheck(
      `routing: ten deployments (latency strategy) within ${Math.round((1 - t.routingThroughputRatio) * 100)}% of one (lean chat max rps)`,
      row('lean-ten', 'max'),
      row('lean', 'max'),
      t.routingThroughputRatio,
    ),
  );
  return checks;
}

/** The pass/fail summary, one line per check and an overall verdict. */
export function formatAcceptance(checks: readonly AcceptanceCheck[]): string {
  const label = { pass: 'PASS', fail: 'FAIL', missing: 'MISSING', inconclusive: 'INCONCLUSIVE' } as const;
  const lines = checks.map((check) => `  ${label[check.status].padEnd(7)}  ${check.name}: ${check.detail}`);
  const passed = checks.filter((check) => check.status === 'pass').length;
  const overall = passed === checks.length ? 'PASS' : 'FAIL';
  return [...lines, `  ${overall}: ${passed}/${checks.length} acceptance checks passed`].join('\n');
}
