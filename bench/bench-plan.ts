import type { ScenarioName } from './bench-scenarios.ts';

/**
 * What `pnpm bench` measures, in which order and for how long: the targets (the floor and the gateway's shapes), the
 * settings read from the environment, the phases of the run and the time they are planned to take. Pure functions, no
 * I/O, so they are unit tested (`bench-plan.test.ts`).
 */

/**
 * A shape of the gateway as users run it: each is its own `node dist/server.js` process with one worker.
 *
 * - `embedded`: the default of `scripts/start.sh`: no `DATABASE_URL`, no `REDIS_URL`, an empty `TORII_DATA_DIR`; the
 *   embedded database and the ledger on; driven with the master key.
 * - `production`: `DATABASE_URL` (the bench's PostgreSQL) and `REDIS_URL` (the bench's Redis), the ledger on; driven
 *   with a virtual key that has RPM/TPM limits and a budget.
 * - `lean`: `TORII_DATABASE=off`: no database, no ledger, master key only.
 */
export type ShapeName = 'embedded' | 'production' | 'lean';

/** Every shape, in report order. */
export const shapeNames: readonly ShapeName[] = ['embedded', 'production', 'lean'];

/**
 * Who serves a measurement: the mock upstream hit directly (load-side evidence), the bare pass-through proxy
 * (`floor`), a shape, `production-master`: the production process driven with the master key instead of the
 * virtual key (only where the key's own cost is compared, at concurrency 1), or `lean-ten`: the lean process driven
 * with `chat-ten` (a group of ten deployments under the latency strategy) where its `chat` (one deployment) is
 * measured, so routing's cost is compared round by round.
 */
export type TargetName = 'mock' | 'floor' | ShapeName | 'production-master' | 'lean-ten';

/** Every target, in report order. */
export const targetNames: readonly TargetName[] = [
  'mock',
  'floor',
  'embedded',
  'production',
  'production-master',
  'lean',
  'lean-ten',
];

/** The process a target runs in (`production-master` is the production process, `lean-ten` the lean one). */
export function processOf(target: TargetName): Exclude<TargetName, 'production-master' | 'lean-ten'> {
  return target === 'production-master' ? 'production' : target === 'lean-ten' ? 'lean' : target;
}

/** The scenario a target is driven with in a phase of `scenario`: `lean-ten` sends `chat-ten` where others send `chat`. */
export function scenarioOf(target: TargetName, scenario: ScenarioName): ScenarioName {
  return target === 'lean-ten' && scenario === 'chat' ? 'chat-ten' : scenario;
}

/**
 * What a phase measures:
 *
 * - `max`: as fast as 32 connections allow (max throughput);
 * - `rate`: paced to a fixed aggregate rate (latency without queueing);
 * - `c1`: one connection, as fast as it goes (added latency per request);
 * - `first-byte`: sequential requests from `bench-first-byte.ts`, time from the write to the first body byte;
 * - `hey`: the fixed rate again with a second load generator, `hey`, as a cross-check of wrk;
 * - `info`: short informational rows (other connection counts and dialects).
 */
export type MeasurementKind = 'max' | 'rate' | 'c1' | 'first-byte' | 'hey' | 'info';

/** Which program generated the load of a measurement. */
export type Generator = 'wrk' | 'hey' | 'first-byte';

/** The generator of each kind of measurement. */
export function generatorOf(kind: MeasurementKind): Generator {
  return kind === 'hey' ? 'hey' : kind === 'first-byte' ? 'first-byte' : 'wrk';
}

/** One phase of the run: one measurement against several targets, in interleaved rounds. */
export interface Phase {
  kind: MeasurementKind;
  scenario: ScenarioName;
  connections: number;
  /** Aggregate requests per second, on `rate` and `hey` phases. */
  rate?: number;
  /** Seconds per run (for `first-byte`, an estimate used for the plan). */
  seconds: number;
  /** `first-byte` only: sequential requests per run. */
  requests?: number;
  /**
   * `first-byte` only: the target every run is paired with step by step (one request to each per step), the floor
   * when absent. `production-master` for the virtual key's own cost: the same process with the master key.
   */
  base?: TargetName;
  rounds: number;
  /**
   * At most this many rounds more, run while fewer than `rounds` rounds were quiet ({@link quietStealPercent}): the
   * p99 checks judge the quiet rounds. Only chat's fixed rate has them.
   */
  extraRounds?: number;
  /** The targets in the first round's order; the order is reversed every other round. */
  targets: TargetName[];
  /** Measured once, before the first round's targets (the mock's load-side evidence). */
  once?: TargetName[];
  /** Skipped first when the run is over its time budget. */
  informational?: boolean;
}

/** Durations, rates and sizes; every duration scales with `BENCH_DURATION_SCALE` (each at least 1 s). */
export interface BenchSettings {
  scale: number;
  /**
   * Warm-up of each proxy with `chat` at 32 connections, then with `chat-stream` for 0.4 times as long: long enough
   * for V8 to finish compiling the hot paths. Measured on the bench machine at max load, the optimizing compiler's
   * threads burn 470-730 ms of every 4 s on the one core torii shares with them for the first ~12 s (the floor's for
   * ~8 s), and 80-110 ms after; throughput rises 30-60% over that time. A server runs for hours, so the bench
   * measures that steady state, not the first seconds (cold start has its own column).
   */
  warmUpSeconds: number;
  /** The mock's and production-master's warm-up (the mock is only evidence; production-master's process is warm). */
  shortWarmUpSeconds: number;
  maxSeconds: number;
  /** Rounds of the max-throughput phases: short runs, more of them, so one slow stretch of the host moves no median. */
  maxRounds: number;
  rateSeconds: number;
  concurrencyOneSeconds: number;
  firstByteRequests: number;
  /** The first-byte client stops measuring after this long even if it sent fewer requests. */
  firstByteSeconds: number;
  heySeconds: number;
  informationalSeconds: number;
  rounds: number;
  /** The most rounds chat's fixed rate adds while too few were quiet ({@link Phase.extraRounds}). */
  extraRounds: number;
  rate: number;
  rateConnections: number;
  maxConnections: number;
  /** Runs that would end after this many seconds from the start are skipped (informational ones first). */
  budgetSeconds: number;
}

/**
 * Reads the settings from the environment (`BENCH_DURATION_SCALE`, `BENCH_RATE`, `BENCH_RATE_CONNECTIONS`,
 * `BENCH_BUDGET_SECONDS`).
 *
 * @example
 * const settings = readSettings({ BENCH_DURATION_SCALE: '0.2' }); // rateSeconds 2
 */
export function readSettings(environment: Record<string, string | undefined>): BenchSettings {
  const scale = Number(environment.BENCH_DURATION_SCALE ?? 1) || 1;
  const seconds = (base: number): number => Math.max(1, Math.round(base * scale));
  const settings: BenchSettings = {
    scale,
    warmUpSeconds: seconds(20),
    shortWarmUpSeconds: seconds(2),
    maxSeconds: seconds(2),
    maxRounds: 5,
    // "Long enough for a stable p99": at least 10 s a round at full scale.
    rateSeconds: seconds(10),
    concurrencyOneSeconds: seconds(2),
    firstByteRequests: Math.max(200, Math.round(2_000 * scale)),
    firstByteSeconds: seconds(3),
    heySeconds: seconds(10),
    informationalSeconds: seconds(2),
    rounds: 3,
    extraRounds: 3,
    // Well below one core's capacity for every target, so p50 and p99 show added latency rather than queueing.
    rate: Number(environment.BENCH_RATE ?? 1_000),
    rateConnections: Number(environment.BENCH_RATE_CONNECTIONS ?? 20),
    maxConnections: 32,
    budgetSeconds: 0,
  };
  // Default: the planned time (every extra round included) plus 10% and 30 s, at most 840 s (14 minutes).
  const planned = plannedSeconds(settings, measurementPlan(settings));
  settings.budgetSeconds = Number(environment.BENCH_BUDGET_SECONDS ?? Math.min(840, Math.round(planned * 1.1 + 30)));
  return settings;
}

/**
 * The phases of a run, in order: per scenario (`chat`, then `chat-stream`) max throughput, the fixed rate and
 * concurrency 1 (and for `chat-stream` time to first byte), each in interleaved rounds against the floor and every
 * shape (`production-master` only at concurrency 1, next to `production`; `lean-ten` only at chat's max throughput,
 * next to `lean`); then the hey cross-check (chat at the fixed rate: floor, production, lean); then the informational
 * rows on `lean` and the floor (chat at 10 and 100 connections, `messages`, `responses`). `shapes` are the shapes
 * that started.
 */
export function measurementPlan(settings: BenchSettings, shapes: readonly ShapeName[] = shapeNames): Phase[] {
  // The order of a round (reversed every other round): each shape beside what its checks compare it with, since the
  // host's speed drifts within seconds. Production beside the floor (its max-throughput and p99 checks), embedded
  // beside production (its throughput and p99 are checked against production's), lean-ten beside lean.
  const compared: TargetName[] = [
    'floor',
    ...(['production', 'embedded', 'lean'] as const).filter((shape) => shapes.includes(shape)),
  ];
  const withMaster: TargetName[] = compared.flatMap((target) =>
    target === 'production' ? ['production', 'production-master'] : [target],
  );
  const phases: Phase[] = [];
  for (const scenario of ['chat', 'chat-stream'] as const) {
    phases.push(
      {
        kind: 'max',
        scenario,
        connections: settings.maxConnections,
        seconds: settings.maxSeconds,
        rounds: settings.maxRounds,
        // Routing's cost on a healthy group: lean with ten deployments (latency strategy) beside lean with one.
        targets: scenario === 'chat' && compared.includes('lean') ? [...compared, 'lean-ten'] : compared,
        once: ['mock'],
      },
      {
        kind: 'rate',
        scenario,
        connections: settings.rateConnections,
        rate: settings.rate,
        seconds: settings.rateSeconds,
        rounds: settings.rounds,
        // The p99 checks are on chat: its rounds go on, a few at most, until enough were quiet.
        ...(scenario === 'chat' ? { extraRounds: settings.extraRounds } : {}),
        targets: compared,
      },
      {
        kind: 'c1',
        scenario,
        connections: 1,
        seconds: settings.concurrencyOneSeconds,
        rounds: settings.rounds,
        targets: withMaster,
      },
    );
    const firstByte = (targets: TargetName[], base?: TargetName): Phase => ({
      kind: 'first-byte',
      scenario,
      connections: 1,
      requests: settings.firstByteRequests,
      // The measured requests stop after this long (about 1 ms a request on this machine, 2 s for 2,000; a loaded
      // machine would otherwise stretch the phase), plus the client's start and warm-up.
      seconds: settings.firstByteSeconds,
      rounds: settings.rounds,
      targets,
      ...(base === undefined ? {} : { base }),
    });
    // The virtual key's own cost at concurrency 1, step by step beside the master key on the same process: the
    // check's 0.05 ms is below what two c1 runs seconds apart resolve on a host whose p50 drifts by more.
    if (scenario === 'chat' && compared.includes('production'))
      phases.push(firstByte(['production'], 'production-master'));
    if (scenario === 'chat-stream') phases.push(firstByte(compared));
  }
  phases.push({
    kind: 'hey',
    scenario: 'chat',
    connections: settings.rateConnections,
    rate: settings.rate,
    seconds: settings.heySeconds,
    rounds: 1,
    targets: compared.filter((target) => target !== 'embedded'),
  });
  const informational: TargetName[] = compared.filter((target) => target === 'floor' || target === 'lean');
  if (informational.includes('lean')) {
    for (const [scenario, connections] of [
      ['chat', 10],
      ['chat', 100],
      ['messages', settings.maxConnections],
      ['responses', settings.maxConnections],
    ] as const) {
      phases.push({
        kind: 'info',
        scenario,
        connections,
        seconds: settings.informationalSeconds,
        rounds: 1,
        targets: informational,
        informational: true,
      });
    }
  }
  return phases;
}

/**
 * A round is quiet when the hypervisor's steal stayed at or under this percent of the target's and of the load's CPU
 * in each of its runs (`stealPercent`). Measured on the bench machine: the floor's own p99 at 1,000 rps moved from
 * 2 to 30 ms between 10-s runs as the steal went from 0.3% to 6-12%; in seven runs under 1% it was 1.2-5.1 ms in six
 * and 11 ms in one.
 */
export const quietStealPercent = 1;

/** Seconds of start-up (compiling, PostgreSQL's initdb, each process's cold start) the plan assumes. */
export const plannedStartSeconds = 15;

/** Seconds each run costs on top of its load (spawning wrk, reading /proc, counters). */
export const plannedOverheadPerRunSeconds = 0.1;

/** The warm-ups of a run: each proxy with chat and chat-stream, the mock and production-master briefly. */
export function warmUpPlan(
  settings: BenchSettings,
  shapes: readonly ShapeName[] = shapeNames,
): { target: TargetName; scenario: ScenarioName; seconds: number }[] {
  const warmUps: { target: TargetName; scenario: ScenarioName; seconds: number }[] = [
    { target: 'mock', scenario: 'chat', seconds: settings.shortWarmUpSeconds },
  ];
  for (const target of ['floor', ...shapeNames.filter((shape) => shapes.includes(shape))] as TargetName[]) {
    warmUps.push(
      { target, scenario: 'chat', seconds: settings.warmUpSeconds },
      { target, scenario: 'chat-stream', seconds: Math.max(1, Math.round(settings.warmUpSeconds * 0.4)) },
    );
    if (target === 'production') {
      warmUps.push({ target: 'production-master', scenario: 'chat', seconds: settings.shortWarmUpSeconds });
    }
    if (target === 'lean') {
      warmUps.push({ target: 'lean-ten', scenario: 'chat-ten', seconds: settings.shortWarmUpSeconds });
    }
  }
  return warmUps;
}

/** The most runs a phase makes (every target every round, extra rounds included, plus the `once` targets). */
export function phaseRuns(phase: Phase): number {
  return (phase.rounds + (phase.extraRounds ?? 0)) * phase.targets.length + (phase.once?.length ?? 0);
}

/** The planned wall time of a run, in seconds: start-up, warm-ups, every run's load and its overhead. */
export function plannedSeconds(
  settings: BenchSettings,
  phases: readonly Phase[],
  shapes: readonly ShapeName[] = shapeNames,
): number {
  const warmUps = warmUpPlan(settings, shapes);
  const warmUpSeconds = warmUps.reduce((sum, warmUp) => sum + warmUp.seconds + plannedOverheadPerRunSeconds, 0);
  const phaseSeconds = phases.reduce(
    (sum, phase) => sum + phaseRuns(phase) * (phase.seconds + plannedOverheadPerRunSeconds),
    0,
  );
  return plannedStartSeconds + warmUpSeconds + phaseSeconds;
}

/** The order of a phase's targets in round `round` (0-based): the first round's order, reversed every other round. */
export function roundOrder(phase: Phase, round: number): TargetName[] {
  return round % 2 === 0 ? [...phase.targets] : [...phase.targets].reverse();
}

/** A short label of a phase for the log: `chat max c32 3s`. */
export function describePhase(phase: Phase): string {
  const load =
    phase.kind === 'first-byte'
      ? `first byte ${phase.requests} requests (at most ${phase.seconds} s)`
      : phase.rate === undefined
        ? `${phase.kind} c${phase.connections}`
        : `${phase.kind} c${phase.connections} ${phase.rate} rps`;
  const beside = phase.base === undefined ? '' : ` beside ${phase.base}`;
  return `${phase.scenario} ${load}${phase.kind === 'first-byte' ? beside : ` ${phase.seconds}s`}`;
}
