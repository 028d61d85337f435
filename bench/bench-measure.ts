import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseFirstByteOutput } from './bench-first-byte.ts';
import { runHey } from './bench-hey.ts';
import { sampleLoadSide } from './bench-load-side.ts';
import { networkWindow, type NetworkWindow } from './bench-network.ts';
import { scenarioOf, type Phase, type TargetName } from './bench-plan.ts';
import {
  logTail,
  processTree,
  readCpuTicks,
  readPeakRssBytes,
  readTreeTicks,
  resetPeakRss,
  spawnPinned,
  stealPercent,
  ticksPerSecond,
} from './bench-process.ts';
import type { RunResult } from './bench-report.ts';
import { scenarios, type ScenarioName } from './bench-scenarios.ts';
import type { BenchServices } from './bench-services.ts';
import type { LiveTarget } from './bench-targets.ts';
import { runWrk } from './bench-wrk.ts';

/**
 * One run of one target in one round of a phase: the load (wrk, hey or the first-byte client, all pinned to the load
 * CPU), and around it what the report needs from the target's side: the process tree's CPU time (utime + stime of
 * every thread, reaped children included) per request, its peak RSS (the kernel's high-water mark, reset before the
 * run), the CPU split over the middle of wrk runs, and for production at the fixed rate the Redis and PostgreSQL
 * counters.
 */

/** What every run needs besides its target and phase. */
export interface MeasureContext {
  temporaryDirectory: string;
  bodyFiles: ReadonlyMap<ScenarioName, string>;
  mockPid: number;
  targetCpu: number;
  loadCpu: number;
  /** The compiled `bench-first-byte.ts`. */
  firstByteScript: string;
  /** The services whose counters are read around production's fixed-rate runs. */
  services: BenchServices | undefined;
  /** The floor, measured step by step beside every other target's first-byte runs (unless the phase names a base). */
  floor: LiveTarget | undefined;
  /** Every started target, for a first-byte phase's `base`. */
  live: ReadonlyMap<TargetName, LiveTarget>;
}

/** A run's result, plus the network window (production at the fixed rate) and what the log line says. */
export interface MeasuredRun {
  run: RunResult;
  network?: NetworkWindow;
  /** In-flight requests the generator may have left uncounted (for the ledger cross-check). */
  uncountedAtMost: number;
  /** Requests the generator sent before measuring (first-byte warm-up), which reached the target too. */
  unmeasuredRequests: number;
  errorDetail: string;
}

let runNumber = 0;

/**
 * Runs one load against one target and measures it. `round` is 1-based.
 *
 * @example
 * const { run } = await measureRun(context, production, phase, 1);
 */
export async function measureRun(
  context: MeasureContext,
  target: LiveTarget,
  phase: Phase,
  round: number,
): Promise<MeasuredRun> {
  const pids = processTree(target.managed.pid);
  resetPeakRss(pids);
  const scenario = scenarioOf(target.name, phase.scenario);
  const url = `http://127.0.0.1:${target.port}${scenarios[scenario].path}`;
  const bodyFile = context.bodyFiles.get(scenario)!;
  const logPath = join(context.temporaryDirectory, `load-${++runNumber}.log`);
  const countNetwork = target.name === 'production' && phase.kind === 'rate' && context.services !== undefined;
  const before = countNetwork ? await context.services!.readCounters() : undefined;
  const ticksBefore = readTreeTicks(processTree(target.managed.pid));
  const cpusBefore = readCpuTicks([context.targetCpu, context.loadCpu]);
  let result: Omit<RunResult, 'round' | 'cpu_ms_per_request' | 'peakRssMb'>;
  let uncountedAtMost = 0;
  let unmeasuredRequests = 0;
  let errorDetail = '';
  if (phase.kind === 'first-byte') {
    const warmUp = 200;
    const paired =
      phase.base === undefined ? (target.name === 'floor' ? undefined : context.floor) : context.live.get(phase.base);
    const base = paired?.managed.hasExited() !== false ? undefined : paired;
    const client = spawnPinned({
      name: 'first-byte',
      cpu: context.loadCpu,
      command: [process.execPath, context.firstByteScript],
      environment: {
        BENCH_URL: url,
        BENCH_BODY_FILE: bodyFile,
        BENCH_AUTHORIZATION: target.authorization,
        BENCH_REQUESTS: String(phase.requests ?? 2_000),
        BENCH_WARM_UP_REQUESTS: String(warmUp),
        BENCH_MAX_SECONDS: String(phase.seconds),
        ...(base === undefined
          ? {}
          : {
              BENCH_BASE_URL: `http://127.0.0.1:${base.port}${scenarios[scenario].path}`,
              BENCH_BASE_AUTHORIZATION: base.authorization,
            }),
      },
      logPath,
    });
    const timeout = sleep(120_000, undefined, { ref: false }).then(() => 'timeout' as const);
    const outcome = await Promise.race([client.exited, timeout]);
    if (outcome === 'timeout') {
      try {
        process.kill(-client.pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
      throw new Error('the first-byte client did not finish within 120 s; killed it');
    }
    const output = logTail(client, 100_000);
    if (outcome.code !== 0) throw new Error(`the first-byte client exited with code ${outcome.code}:\n${output}`);
    const measured = parseFirstByteOutput(output);
    unmeasuredRequests = warmUp;
    result = {
      requests: measured.requests,
      rps: measured.seconds > 0 ? measured.requests / measured.seconds : 0,
      p50_ms: measured.firstByteMs.p50,
      p99_ms: measured.firstByteMs.p99,
      errors: measured.errors,
      ...(measured.paired === undefined ? {} : { paired_difference_p50_ms: measured.paired.firstByteDifferenceMs.p50 }),
    };
  } else if (phase.kind === 'hey') {
    const measured = await runHey({
      url,
      connections: phase.connections,
      rate: phase.rate ?? 1_000,
      seconds: phase.seconds,
      bodyFile,
      authorization: target.authorization,
      cpu: context.loadCpu,
      logPath,
    });
    uncountedAtMost = phase.connections;
    result = {
      requests: measured.requests,
      rps: measured.requestsPerSecond,
      p50_ms: measured.p50Ms,
      p99_ms: measured.p99Ms,
      errors: measured.errors,
    };
  } else {
    const { result: wrk, during } = await runWrk({
      url,
      connections: phase.connections,
      durationSeconds: phase.seconds,
      bodyFile,
      authorization: target.authorization,
      ...(phase.rate === undefined ? {} : { rate: phase.rate }),
      cpu: context.loadCpu,
      logPath,
      during: (wrkPid) =>
        sampleLoadSide({
          wrkPid,
          seconds: phase.seconds,
          targetPid: target.managed.pid,
          mockPid: context.mockPid,
          targetCpu: context.targetCpu,
          loadCpu: context.loadCpu,
        }),
    });
    uncountedAtMost = phase.connections;
    errorDetail = wrk.errors === 0 ? '' : ` ${JSON.stringify(wrk.errorBreakdown)}`;
    result = {
      requests: wrk.requests,
      rps: wrk.requestsPerSecond,
      p50_ms: wrk.latencyMilliseconds.p50,
      p99_ms: wrk.latencyMilliseconds.p99,
      errors: wrk.errors,
      ...(during === undefined ? {} : { load: during }),
    };
  }
  const steal = stealPercent(cpusBefore, readCpuTicks([context.targetCpu, context.loadCpu]));
  const treeAfter = processTree(target.managed.pid);
  const ticks = readTreeTicks(treeAfter) - ticksBefore;
  const after = before === undefined ? undefined : await context.services!.readCounters();
  return {
    run: {
      ...result,
      round,
      // The first-byte client's warm-up requests reached the target too.
      cpu_ms_per_request:
        result.requests > 0 ? (ticks * (1_000 / ticksPerSecond)) / (result.requests + unmeasuredRequests) : null,
      peakRssMb: readPeakRssBytes(treeAfter) / (1_024 * 1_024),
      steal_percent: steal,
    },
    ...(before !== undefined && after !== undefined
      ? { network: networkWindow(before, after, phase, result.requests) }
      : {}),
    uncountedAtMost,
    unmeasuredRequests,
    errorDetail,
  };
}
