import { build } from 'esbuild';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import {
  freePort,
  installCleanup,
  logTail,
  processTree,
  readCpuTicks,
  readOtherProcessTicks,
  readPeakRssBytes,
  readProcessTicks,
  resetPeakRss,
  spawnPinned,
  stopProcess,
  ticksPerSecond,
  waitForFirst200,
  type ColdStart,
  type ManagedProcess,
} from './bench-process.ts';
import {
  evaluateAcceptance,
  formatAcceptance,
  formatLoadSide,
  formatTable,
  measurementKey,
  medianOfRounds,
  resultsDocument,
  targetNames,
  type BenchRow,
  type LoadSideUsage,
  type ReportRow,
  type TargetName,
} from './bench-report.ts';
import { benchModel, scenarioRequestBody, type ScenarioName } from './bench-scenarios.ts';
import { assertWrkInstalled, runWrk } from './bench-wrk.ts';

/**
 * `pnpm bench`: measures the gateway against its floor in one run on loopback, and prints the report.
 *
 * Three targets: `mock` (the mock upstream hit directly), `floor` (a bare node:http + undici pass-through proxy) and
 * `torii` (`node dist/server.js` with one worker, or `TORII_BENCH_COMMAND`). The proxies are pinned to CPU 0; wrk and
 * the mock to CPU 1. Every measurement runs against all three targets back to back, so the CPU's speed drift affects
 * them alike. See bench/README.md for the measurements, the environment variables and the JSON format.
 */

const benchDirectory = dirname(fileURLToPath(import.meta.url));
const repositoryRoot = dirname(benchDirectory);
const targetCpu = 0;
const loadCpu = 1;

/** Durations and rates; every duration scales with `BENCH_DURATION_SCALE` (default 1). */
interface BenchSettings {
  warmUpSeconds: number;
  throughputSeconds: number;
  sweepSeconds: number;
  fixedRateSeconds: number;
  rate: number;
  rateConnections: number;
  throughputConnections: number;
  sweepConnections: number[];
  /** Runs that would end after this many seconds from the start are skipped, so the bench stays under 3 minutes. */
  budgetSeconds: number;
}

function readSettings(): BenchSettings {
  const scale = Number(process.env.BENCH_DURATION_SCALE ?? 1) || 1;
  const seconds = (base: number): number => Math.max(1, Math.round(base * scale));
  return {
    warmUpSeconds: seconds(8),
    throughputSeconds: seconds(9),
    sweepSeconds: seconds(3),
    fixedRateSeconds: seconds(2),
    // Well below one core's capacity for both proxies, so p50 shows added latency rather than queueing; the plan also
    // runs twice this rate for information.
    rate: Number(process.env.BENCH_RATE ?? 1_000),
    rateConnections: Number(process.env.BENCH_RATE_CONNECTIONS ?? 20),
    throughputConnections: 32,
    sweepConnections: [1, 10, 50, 100],
    budgetSeconds: Number(process.env.BENCH_BUDGET_SECONDS ?? 165),
  };
}

/** One measurement, run against every target. */
interface Measurement {
  scenario: ScenarioName;
  connections: number;
  rate?: number;
  /** Seconds per round. */
  seconds: number;
  /** Rounds per target (median reported); default 1. */
  repeats?: number;
}

function measurementPlan(settings: BenchSettings): Measurement[] {
  // The acceptance measurements (chat at 32 connections, chat at the fixed rate, the sweep's 10 and 100 connections that
  // the no-collapse check compares) run in three alternating rounds and report medians.
  const round = Math.max(1, Math.round(settings.throughputSeconds / 3));
  return [
    { scenario: 'chat', connections: settings.throughputConnections, seconds: round, repeats: 3 },
    {
      scenario: 'chat-stream',
      connections: settings.throughputConnections,
      seconds: Math.max(1, Math.round((settings.throughputSeconds * 2) / 3)),
    },
    { scenario: 'chat', connections: settings.rateConnections, rate: settings.rate, seconds: round, repeats: 3 },
    {
      scenario: 'chat',
      connections: settings.rateConnections,
      rate: settings.rate * 2,
      seconds: settings.fixedRateSeconds,
    },
    {
      scenario: 'chat-stream',
      connections: settings.rateConnections,
      rate: settings.rate,
      seconds: settings.fixedRateSeconds,
    },
    ...settings.sweepConnections.map((connections) =>
      connections === 10 || connections === 100
        ? { scenario: 'chat' as const, connections, seconds: 2, repeats: 3 }
        : { scenario: 'chat' as const, connections, seconds: settings.sweepSeconds },
    ),
  ];
}

/** A started target. */
interface Target {
  name: TargetName;
  port: number;
  managed: ManagedProcess;
  coldStart: ColdStart;
}

const startedAt = performance.now();
const elapsedSeconds = (): number => (performance.now() - startedAt) / 1_000;
const log = (message: string): void => {
  process.stdout.write(`[${elapsedSeconds().toFixed(1).padStart(5)}s] ${message}\n`);
};

async function startTarget(options: {
  name: TargetName;
  cpu: number;
  command: string[];
  environment: Record<string, string>;
  workingDirectory: string;
  temporaryDirectory: string;
  port: number;
  authorization: string;
}): Promise<Target> {
  const spawnedAt = performance.now();
  const managed = spawnPinned({
    name: options.name,
    cpu: options.cpu,
    command: options.command,
    environment: options.environment,
    workingDirectory: options.workingDirectory,
    logPath: join(options.temporaryDirectory, `${options.name}.log`),
  });
  try {
    const coldStart = await waitForFirst200({
      managed,
      spawnedAt,
      port: options.port,
      chatBody: scenarioRequestBody('chat'),
      authorization: options.authorization,
    });
    log(
      `${options.name} up (pid ${managed.pid}, CPU ${options.cpu}): ready after ${coldStart.readySeconds.toFixed(3)} s, ` +
        `first chat 200 after ${coldStart.firstChatSeconds.toFixed(3)} s`,
    );
    return { name: options.name, port: options.port, managed, coldStart };
  } catch (error) {
    await stopProcess(managed, { timeoutMs: 2_000 });
    const tail = logTail(managed);
    throw new Error(`${(error as Error).message}${tail === '' ? '' : `\n--- ${options.name} log tail ---\n${tail}`}`, {
      cause: error,
    });
  }
}

/**
 * Samples CPU use over the middle of a wrk run, from 0.5 s after its start to 0.3 s before its end: both cores, wrk,
 * the mock, the target's process tree, and every process that is not part of the benchmark.
 */
async function sampleLoadSide(
  wrkPid: number,
  seconds: number,
  target: Target,
  mock: Target,
  allTargets: readonly Target[],
): Promise<LoadSideUsage> {
  const runMilliseconds = seconds * 1_000;
  const from = Math.min(500, runMilliseconds * 0.2);
  const to = runMilliseconds - Math.min(300, runMilliseconds * 0.1);
  await sleep(from);
  const targetPids = processTree(target.managed.pid);
  const benchPids = new Set([process.pid, wrkPid, ...allTargets.flatMap((each) => processTree(each.managed.pid))]);
  const snapshot = () => ({
    at: performance.now(),
    cpus: readCpuTicks([targetCpu, loadCpu]),
    wrk: readProcessTicks([wrkPid]),
    mock: readProcessTicks([mock.managed.pid]),
    target: readProcessTicks(targetPids),
    other: readOtherProcessTicks(benchPids),
  });
  const first = snapshot();
  await sleep(to - from);
  const last = snapshot();
  const wallTicks = ((last.at - first.at) / 1_000) * ticksPerSecond;
  const processPercent = (before: number, after: number): number =>
    wallTicks > 0 ? ((after - before) / wallTicks) * 100 : 0;
  const cpuPercent = (cpu: number): number => {
    const before = first.cpus.get(cpu);
    const after = last.cpus.get(cpu);
    if (before === undefined || after === undefined || after.total === before.total) return 0;
    return ((after.busy - before.busy) / (after.total - before.total)) * 100;
  };
  return {
    cpu0Percent: cpuPercent(targetCpu),
    cpu1Percent: cpuPercent(loadCpu),
    wrkPercent: processPercent(first.wrk, last.wrk),
    mockPercent: processPercent(first.mock, last.mock),
    targetPercent: processPercent(first.target, last.target),
    otherPercent: Math.max(0, processPercent(first.other, last.other)),
  };
}

/**
 * Compiles a bench server to plain JavaScript in the temp dir (esbuild, dependencies left as imports and resolved
 * through a `node_modules` link), so that, like `dist/server.js`, it pays neither the start-up time nor the ~18 MB of
 * memory of Node's TypeScript type stripping. Returns the path of the `.mjs` file.
 */
async function compileBenchServer(sourceName: string, temporaryDirectory: string): Promise<string> {
  const link = join(temporaryDirectory, 'node_modules');
  if (!existsSync(link)) symlinkSync(join(repositoryRoot, 'node_modules'), link, 'dir');
  const outfile = join(temporaryDirectory, sourceName.replace(/\.ts$/, '.mjs'));
  await build({
    entryPoints: [join(benchDirectory, sourceName)],
    outfile,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node22',
    logLevel: 'warning',
  });
  return outfile;
}

function describeMeasurement(measurement: Measurement): string {
  const load = measurement.rate === undefined ? 'max' : `${measurement.rate} rps`;
  return `${measurement.scenario} c${measurement.connections} ${load} ${measurement.seconds}s`;
}

async function main(): Promise<number> {
  assertWrkInstalled();
  const settings = readSettings();
  const plan = measurementPlan(settings);
  const temporaryDirectory = mkdtempSync(join(tmpdir(), 'torii-bench-'));
  installCleanup(() => rmSync(temporaryDirectory, { recursive: true, force: true }));

  const masterKey = `sk-torii-bench-${crypto.randomUUID()}`;
  const authorization = `Bearer ${masterKey}`;
  const bodyFiles = new Map<ScenarioName, string>();
  for (const scenario of ['chat', 'chat-stream'] as const) {
    const path = join(temporaryDirectory, `${scenario}.json`);
    writeFileSync(path, scenarioRequestBody(scenario));
    bodyFiles.set(scenario, path);
  }

  const toriiOverride = process.env.TORII_BENCH_COMMAND?.trim() || undefined;
  const distServer = join(repositoryRoot, 'dist', 'server.js');
  const cpuModel = /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';
  const plannedSeconds =
    3 * (settings.warmUpSeconds + 1 + plan.reduce((sum, measurement) => sum + measurement.seconds, 0));
  log(`torii bench: node ${process.version}, ${cpuModel}; targets on CPU ${targetCpu}, wrk and mock on CPU ${loadCpu}`);
  log(`planned load time ~${plannedSeconds} s (${plan.length} measurements x 3 targets + warm-up)`);

  const mockScript = await compileBenchServer('bench-mock-upstream.ts', temporaryDirectory);
  const floorScript = await compileBenchServer('bench-floor-proxy.ts', temporaryDirectory);
  const [mockPort, floorPort, toriiPort] = [await freePort(), await freePort(), await freePort()];
  const mockURL = `http://127.0.0.1:${mockPort}`;
  const mock = await startTarget({
    name: 'mock',
    cpu: loadCpu,
    command: [process.execPath, mockScript],
    environment: { PORT: String(mockPort) },
    workingDirectory: repositoryRoot,
    temporaryDirectory,
    port: mockPort,
    authorization,
  });
  const floor = await startTarget({
    name: 'floor',
    cpu: targetCpu,
    command: [process.execPath, floorScript],
    environment: { PORT: String(floorPort), BENCH_UPSTREAM_URL: mockURL },
    workingDirectory: repositoryRoot,
    temporaryDirectory,
    port: floorPort,
    authorization,
  });

  const configPath = join(temporaryDirectory, 'torii-config.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      modelGroups: {
        [benchModel]: {
          deployments: [{ provider: 'openai', model: benchModel, baseURL: `${mockURL}/v1`, apiKey: 'sk-bench' }],
        },
      },
    }),
  );
  const targets: Target[] = [mock, floor];
  let toriiProblem: string | undefined;
  if (toriiOverride === undefined && !existsSync(distServer)) {
    toriiProblem = `${distServer} does not exist: run \`pnpm build\` (or set TORII_BENCH_COMMAND)`;
  } else {
    try {
      const torii = await startTarget({
        name: 'torii',
        cpu: targetCpu,
        // The override runs from the repository root; dist/server.js runs in the temp dir so any local data it
        // writes (such as an embedded database) starts empty and is removed afterwards.
        command: toriiOverride === undefined ? [process.execPath, distServer] : ['sh', '-c', `exec ${toriiOverride}`],
        environment: {
          PORT: String(toriiPort),
          TORII_WORKERS: '1',
          TORII_MASTER_KEY: masterKey,
          TORII_CONFIG: configPath,
          // For stand-ins: `TORII_BENCH_COMMAND='node $BENCH_FLOOR_SCRIPT'` runs the compiled floor as torii.
          BENCH_UPSTREAM_URL: mockURL,
          BENCH_FLOOR_SCRIPT: floorScript,
        },
        workingDirectory: toriiOverride === undefined ? temporaryDirectory : repositoryRoot,
        temporaryDirectory,
        port: toriiPort,
        authorization,
      });
      if (toriiOverride !== undefined) log(`torii is the stand-in command: ${toriiOverride}`);
      targets.push(torii);
    } catch (error) {
      toriiProblem = (error as Error).message;
    }
  }
  if (toriiProblem !== undefined) log(`torii NOT measured: ${toriiProblem}`);

  let wrkRun = 0;
  const wrkOptions = (target: Target, scenario: ScenarioName, connections: number, seconds: number) => ({
    url: `http://127.0.0.1:${target.port}/v1/chat/completions`,
    connections,
    durationSeconds: seconds,
    bodyFile: bodyFiles.get(scenario)!,
    authorization,
    cpu: loadCpu,
    logPath: join(temporaryDirectory, `wrk-${++wrkRun}.log`),
  });

  for (const target of targets) {
    const warmUps = [
      { scenario: 'chat' as const, seconds: settings.warmUpSeconds },
      { scenario: 'chat-stream' as const, seconds: Math.max(1, Math.round(settings.warmUpSeconds / 2)) },
    ];
    for (const warmUp of warmUps) {
      const { result } = await runWrk(
        wrkOptions(target, warmUp.scenario, settings.throughputConnections, warmUp.seconds),
      );
      log(
        `warm-up ${target.name} ${warmUp.scenario}: ${result.requestsPerSecond.toFixed(0)} rps, ${result.errors} errors`,
      );
    }
  }

  const reportRows: ReportRow[] = [];
  const problems: string[] = toriiProblem === undefined ? [] : [`torii not measured: ${toriiProblem.split('\n')[0]}`];
  async function measureOnce(
    target: Target,
    measurement: Measurement,
    collected: ReportRow[],
    suffix: string,
  ): Promise<void> {
    const label = `${target.name.padEnd(5)} ${describeMeasurement(measurement)}${suffix}`;
    if (target.managed.hasExited()) {
      problems.push(`${label}: skipped, ${target.name} has exited`);
      return;
    }
    if (elapsedSeconds() + measurement.seconds + 1 > settings.budgetSeconds) {
      problems.push(`${label}: skipped, over the ${settings.budgetSeconds} s budget`);
      log(`${label}: skipped (time budget)`);
      return;
    }
    const pids = processTree(target.managed.pid);
    resetPeakRss(pids);
    try {
      const { result, during } = await runWrk({
        ...wrkOptions(target, measurement.scenario, measurement.connections, measurement.seconds),
        ...(measurement.rate === undefined ? {} : { rate: measurement.rate }),
        during: (wrkPid) => sampleLoadSide(wrkPid, measurement.seconds, target, mock, targets),
      });
      const row: BenchRow = {
        target: target.name,
        scenario: measurement.scenario,
        connections: measurement.connections,
        ...(measurement.rate === undefined ? {} : { rate: measurement.rate }),
        rps: result.requestsPerSecond,
        p50_ms: result.latencyMilliseconds.p50,
        p99_ms: result.latencyMilliseconds.p99,
        errors: result.errors,
        peak_rss_mb: readPeakRssBytes(processTree(target.managed.pid)) / (1_024 * 1_024),
        cold_start_s: target.coldStart.firstChatSeconds,
      };
      collected.push({ row, ...(during === undefined ? {} : { load: during }) });
      const errors =
        result.errors === 0 ? '0 errors' : `${result.errors} errors ${JSON.stringify(result.errorBreakdown)}`;
      log(
        `${label}: ${result.requestsPerSecond.toFixed(0)} rps, p50 ${row.p50_ms.toFixed(3)} ms, ` +
          `p99 ${row.p99_ms.toFixed(3)} ms, ${errors}` +
          (during === undefined
            ? ''
            : ` (wrk ${during.wrkPercent.toFixed(0)}%, ${target.name} ${during.targetPercent.toFixed(0)}%)`),
      );
    } catch (error) {
      problems.push(`${label}: ${(error as Error).message.split('\n')[0]}`);
      log(`${label}: FAILED ${(error as Error).message}`);
    }
  }

  for (const [index, measurement] of plan.entries()) {
    // Measurements with repeats run in rounds, floor and torii alternating within each round, and report the median
    // of the rounds: the machine's speed drifts between seconds, and a single run of either can land on a slow spell.
    const repeats = measurement.repeats ?? 1;
    const rounds = new Map<TargetName, ReportRow[]>();
    for (let round = 0; round < repeats; round++) {
      // The mock goes first (once); floor and torii swap places every other round, so neither always runs right
      // after the mock's heaviest load or always first on a core the others just warmed.
      const order = (index + round) % 2 === 0 ? targets : [targets[0]!, ...targets.slice(1).reverse()];
      for (const target of order) {
        if (round > 0 && target.name === 'mock') continue;
        const collected: ReportRow[] = rounds.get(target.name) ?? [];
        rounds.set(target.name, collected);
        await measureOnce(target, measurement, collected, repeats > 1 ? ` (round ${round + 1}/${repeats})` : '');
      }
    }
    for (const collected of rounds.values()) {
      const merged = medianOfRounds(collected);
      if (merged !== undefined) reportRows.push(merged);
    }
  }

  for (const target of [...targets].reverse()) {
    const stopped = await stopProcess(target.managed, {
      signal: 'SIGTERM',
      timeoutMs: target.name === 'torii' ? 10_000 : 3_000,
    });
    const how = stopped.graceful ? `exited (code ${stopped.code}, signal ${stopped.signal})` : 'did not exit, killed';
    log(`${target.name}: SIGTERM -> ${how} after ${stopped.milliseconds.toFixed(0)} ms`);
    if (target.name === 'torii' && !stopped.graceful) problems.push('torii did not exit within 10 s of SIGTERM');
  }

  const planOrder = plan.map((measurement) => measurementKey(measurement));
  reportRows.sort(
    (left, right) =>
      planOrder.indexOf(measurementKey(left.row)) - planOrder.indexOf(measurementKey(right.row)) ||
      targetNames.indexOf(left.row.target) - targetNames.indexOf(right.row.target),
  );
  const rows = reportRows.map((reportRow) => reportRow.row);
  const resultsPath = join(benchDirectory, 'results', 'latest.json');
  mkdirSync(dirname(resultsPath), { recursive: true });
  writeFileSync(resultsPath, JSON.stringify(resultsDocument(rows), null, 2) + '\n');

  const output = [
    '',
    'torii bench: rps and latency from wrk (p50/p99 of every request), peak RSS of the process tree per row,',
    'cold start = exec to first chat 200; rps/floor and p50-floor_ms compare with the floor row of the same run;',
    'cpu0% = target core, cpu1% = load core (wrk + mock), wrk% and target% = those processes, mid-run.',
    '',
    formatTable(reportRows),
    '',
    'Load side:',
    formatLoadSide(reportRows),
    '',
    'Acceptance (chat non-stream, one core):',
    formatAcceptance(evaluateAcceptance(rows)),
    ...(problems.length === 0 ? [] : ['', 'Problems:', ...problems.map((problem) => `  ${problem}`)]),
    '',
    `Wrote ${resultsPath} (${rows.length} rows) in ${elapsedSeconds().toFixed(1)} s.`,
    '',
  ];
  process.stdout.write(output.join('\n'));
  return toriiProblem === undefined ? 0 : 1;
}

try {
  process.exitCode = await main();
} catch (error) {
  process.stderr.write(`bench failed: ${(error as Error).message}\n`);
  process.exitCode = 1;
} finally {
  process.exit();
}
