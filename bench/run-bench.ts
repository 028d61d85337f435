import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  mergeNetworkWindows,
  networkDocument,
  formatNetwork,
  networkWindow,
  type LedgerCheck,
  type NetworkWindow,
} from './bench-network.ts';
import {
  compileBenchServer,
  freePort,
  installCleanup,
  processTree,
  readPeakRssBytes,
  resetPeakRss,
  startPinnedServer,
  stopProcess,
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
  pairedRounds,
  resultsDocument,
  targetNames,
  type BenchRow,
  type ReportRow,
  type TargetName,
} from './bench-report.ts';
import {
  benchClaudeModel,
  benchModel,
  benchResponsesModel,
  scenarioNames,
  scenarioRequestBody,
  scenarios,
  type ScenarioName,
} from './bench-scenarios.ts';
import { sampleLoadSide } from './bench-load-side.ts';
import { startBenchServices, type BenchServices } from './bench-services.ts';
import { createVirtualKey } from './bench-virtual-key.ts';
import { assertWrkInstalled, runWrk } from './bench-wrk.ts';

/**
 * `pnpm bench`: measures the gateway against its floor in one run on loopback, and prints the report.
 *
 * Targets: `mock` (the mock upstream hit directly), `floor` (a bare node:http + undici pass-through proxy), `torii`
 * (`node dist/server.js` with one worker, or `TORII_BENCH_COMMAND`, driven with the master key) and `torii-key` (the
 * same torii process driven with a virtual key that has limits and a budget). torii uses a real PostgreSQL and Redis.
 * The proxies are pinned to CPU 0; wrk, the mock, PostgreSQL and Redis to CPU 1. Every measurement runs against the
 * targets back to back, so the CPU's speed drift affects them alike. See bench/README.md for the measurements, the
 * environment variables and the JSON format.
 */

const benchDirectory = dirname(fileURLToPath(import.meta.url));
const repositoryRoot = dirname(benchDirectory);
const targetCpu = 0;
const loadCpu = 1;

/** Durations and rates; every duration scales with `BENCH_DURATION_SCALE` (default 1). */
interface BenchSettings {
  warmUpSeconds: number;
  /** The mock's warm-up (it is only load-side evidence) and torii-key's (the process is warm already). */
  shortWarmUpSeconds: number;
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
    shortWarmUpSeconds: seconds(2),
    throughputSeconds: seconds(9),
    sweepSeconds: seconds(2),
    fixedRateSeconds: seconds(1),
    // Well below one core's capacity for both proxies, so p50 shows added latency rather than queueing; the plan also
    // runs twice this rate for information.
    rate: Number(process.env.BENCH_RATE ?? 1_000),
    rateConnections: Number(process.env.BENCH_RATE_CONNECTIONS ?? 20),
    throughputConnections: 32,
    sweepConnections: [1, 10, 50, 100],
    budgetSeconds: Number(process.env.BENCH_BUDGET_SECONDS ?? 172),
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
  /** Also measured with the virtual key (`torii-key`). */
  keyed?: boolean;
}

function measurementPlan(settings: BenchSettings): Measurement[] {
  // The acceptance measurements (chat at 32 connections, chat at the fixed rate, the sweep's 10 and 100 connections that
  // the no-collapse check compares) run in three alternating rounds and report medians; the first two also with the
  // virtual key. The informational rows are short (chat-stream, the second rate, the sweep's 1 and 50 connections,
  // messages, responses). messages (Anthropic Messages passed through to an Anthropic-shaped deployment) and responses
  // (OpenAI Responses passed through to an openai deployment, `store: false`) run last, so if the bench runs long they
  // are the ones the time budget skips, not an acceptance row.
  const round = Math.max(1, Math.round(settings.throughputSeconds / 3));
  return [
    { scenario: 'chat', connections: settings.throughputConnections, seconds: round, repeats: 3, keyed: true },
    { scenario: 'chat-stream', connections: settings.throughputConnections, seconds: round },
    {
      scenario: 'chat',
      connections: settings.rateConnections,
      rate: settings.rate,
      seconds: round,
      repeats: 3,
      keyed: true,
    },
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
    { scenario: 'messages', connections: settings.throughputConnections, seconds: round },
    { scenario: 'responses', connections: settings.throughputConnections, seconds: round },
  ];
}

/** A started target. */
interface Target {
  name: TargetName;
  port: number;
  /** The `Authorization` header wrk sends: the master key, or the virtual key for `torii-key`. */
  authorization: string;
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
  const { managed, coldStart } = await startPinnedServer({ ...options, chatBody: scenarioRequestBody('chat') });
  log(
    `${options.name} up (pid ${managed.pid}, CPU ${options.cpu}): ready after ${coldStart.readySeconds.toFixed(3)} s, ` +
      `first chat 200 after ${coldStart.firstChatSeconds.toFixed(3)} s`,
  );
  return { name: options.name, port: options.port, authorization: options.authorization, managed, coldStart };
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
  for (const scenario of scenarioNames) {
    const path = join(temporaryDirectory, `${scenario}.json`);
    writeFileSync(path, scenarioRequestBody(scenario));
    bodyFiles.set(scenario, path);
  }

  const toriiOverride = process.env.TORII_BENCH_COMMAND?.trim() || undefined;
  const distServer = join(repositoryRoot, 'dist', 'server.js');
  const cpuModel = /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';
  const plannedSeconds =
    2 * (settings.warmUpSeconds * 1.5 + settings.shortWarmUpSeconds) +
    plan.reduce(
      (sum, measurement) =>
        sum + measurement.seconds * (1 + (2 + (measurement.keyed ? 1 : 0)) * (measurement.repeats ?? 1)),
      0,
    );
  log(
    `torii bench: node ${process.version}, ${cpuModel}; targets on CPU ${targetCpu}, ` +
      `wrk, mock, PostgreSQL and Redis on CPU ${loadCpu}`,
  );
  log(`planned load time ~${plannedSeconds.toFixed(0)} s (${plan.length} measurements + warm-up)`);

  // PostgreSQL (initdb) and Redis start while the mock and the floor compile.
  const servicesStarting = startBenchServices(loadCpu);
  servicesStarting.catch(() => {});
  const mockScript = await compileBenchServer(join(benchDirectory, 'bench-mock-upstream.ts'), temporaryDirectory);
  const floorScript = await compileBenchServer(join(benchDirectory, 'bench-floor-proxy.ts'), temporaryDirectory);
  let services: BenchServices | undefined;
  let servicesProblem: string | undefined;
  try {
    services = await servicesStarting;
    log(
      `PostgreSQL (pid ${services.postgresPid}) and Redis (pid ${services.redisPid}) up, pinned to CPU ${loadCpu}: ` +
        `${services.databaseUrl} ${services.redisUrl}`,
    );
  } catch (error) {
    servicesProblem = (error as Error).message;
  }
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
        // Same dialect: torii passes /v1/messages through to the mock's /v1/messages.
        [benchClaudeModel]: {
          deployments: [
            { provider: 'anthropic', model: benchClaudeModel, baseURL: `${mockURL}/v1`, apiKey: 'sk-bench' },
          ],
        },
        // Same dialect: the openai preset serves the Responses API natively, so torii passes /v1/responses through
        // to the mock's /v1/responses (the request says `store: false`, so torii records nothing per response).
        [benchResponsesModel]: {
          deployments: [
            { provider: 'openai', model: benchResponsesModel, baseURL: `${mockURL}/v1`, apiKey: 'sk-bench' },
          ],
        },
      },
    }),
  );
  const targets: Target[] = [mock, floor];
  let toriiProblem: string | undefined;
  if (services === undefined) {
    toriiProblem = servicesProblem ?? 'PostgreSQL and Redis did not start';
  } else if (toriiOverride === undefined && !existsSync(distServer)) {
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
          DATABASE_URL: services.databaseUrl,
          REDIS_URL: services.redisUrl,
          TORII_DATA_DIR: temporaryDirectory,
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
  const torii = targets.find((target) => target.name === 'torii');
  let benchKey: { id: string; target: Target } | undefined;
  let keyProblem: string | undefined;
  if (torii !== undefined) {
    try {
      const created = await createVirtualKey(torii.port, authorization);
      benchKey = { id: created.id, target: { ...torii, name: 'torii-key', authorization: `Bearer ${created.key}` } };
      log(`torii-key: virtual key ${created.id} created (limits and budget the run never reaches), first chat 200`);
      targets.push(benchKey.target);
    } catch (error) {
      keyProblem = (error as Error).message;
      log(`torii-key NOT measured: ${keyProblem}`);
    }
  }

  let wrkRun = 0;
  const wrkOptions = (target: Target, scenario: ScenarioName, connections: number, seconds: number) => ({
    url: `http://127.0.0.1:${target.port}${scenarios[scenario].path}`,
    connections,
    durationSeconds: seconds,
    bodyFile: bodyFiles.get(scenario)!,
    authorization: target.authorization,
    cpu: loadCpu,
    logPath: join(temporaryDirectory, `wrk-${++wrkRun}.log`),
  });

  // Requests completed with the virtual key (the creation check's one included), against the ledger at the end.
  const keyRequests = { completed: 1, uncountedAtMost: 0 };
  for (const target of targets) {
    // The mock is only load-side evidence and torii-key runs in the process torii's warm-up just warmed: both get a
    // short warm-up (torii-key's also fills the key cache and takes the first limit leases before the network counts).
    const warmUps =
      target.name === 'mock' || target.name === 'torii-key'
        ? [{ scenario: 'chat' as const, seconds: settings.shortWarmUpSeconds }]
        : [
            { scenario: 'chat' as const, seconds: settings.warmUpSeconds },
            { scenario: 'chat-stream' as const, seconds: Math.max(1, Math.round(settings.warmUpSeconds / 2)) },
          ];
    for (const warmUp of warmUps) {
      const { result } = await runWrk(
        wrkOptions(target, warmUp.scenario, settings.throughputConnections, warmUp.seconds),
      );
      if (target.name === 'torii-key') {
        keyRequests.completed += result.requests;
        keyRequests.uncountedAtMost += settings.throughputConnections;
      }
      log(
        `warm-up ${target.name} ${warmUp.scenario}: ${result.requestsPerSecond.toFixed(0)} rps, ${result.errors} errors`,
      );
    }
  }

  const reportRows: ReportRow[] = [];
  const problems: string[] = toriiProblem === undefined ? [] : [`torii not measured: ${toriiProblem.split('\n')[0]}`];
  if (keyProblem !== undefined) problems.push(`torii-key not measured: ${keyProblem.split('\n')[0]}`);
  const networkWindows: NetworkWindow[] = [];
  async function measureOnce(
    target: Target,
    measurement: Measurement,
    collected: ReportRow[],
    suffix: string,
    countNetwork = true,
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
      // Around the torii-key runs: the services' counters, for the network calls per request.
      // (Not while torii runs beside it: torii's own ledger writes would be charged to the key's requests.)
      const before = target.name === 'torii-key' && countNetwork ? await services?.readCounters() : undefined;
      const { result, during } = await runWrk({
        ...wrkOptions(target, measurement.scenario, measurement.connections, measurement.seconds),
        ...(measurement.rate === undefined ? {} : { rate: measurement.rate }),
        during: (wrkPid) =>
          sampleLoadSide({
            wrkPid,
            seconds: measurement.seconds,
            targetPid: target.managed.pid,
            mockPid: mock.managed.pid,
            targetCpu,
            loadCpu,
          }),
      });
      if (before !== undefined && services !== undefined) {
        networkWindows.push(networkWindow(before, await services.readCounters(), measurement, result.requests));
      }
      if (target.name === 'torii-key' && services !== undefined) {
        keyRequests.completed += result.requests;
        keyRequests.uncountedAtMost += measurement.connections;
      }
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
        // torii-key is the torii process: its cold start is torii's row.
        cold_start_s: target.name === 'torii-key' ? null : target.coldStart.firstChatSeconds,
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
    const measured = measurement.keyed ? targets : targets.filter((target) => target.name !== 'torii-key');
    // At a fixed rate, torii and torii-key are driven at the same time (two wrk, each at the rate, into the one torii
    // process): both p99s then come from the same seconds of the same machine, so the difference is the key path's
    // and not the drift between two runs (run back to back, p99s of identical code differed by up to 1 ms here).
    const keyTarget = measured.find((target) => target.name === 'torii-key');
    const simultaneous = measurement.rate !== undefined && keyTarget !== undefined;
    for (let round = 0; round < repeats; round++) {
      // The mock goes first (once); floor and torii (then torii-key) swap places every other round, so neither always
      // runs right after the mock's heaviest load or always first on a core the others just warmed.
      const order = (index + round) % 2 === 0 ? measured : [measured[0]!, ...measured.slice(1).reverse()];
      for (const target of order) {
        if (round > 0 && target.name === 'mock') continue;
        if (simultaneous && target.name === 'torii-key') continue; // measured with torii
        const collected: ReportRow[] = rounds.get(target.name) ?? [];
        rounds.set(target.name, collected);
        const suffix = repeats > 1 ? ` (round ${round + 1}/${repeats})` : '';
        if (simultaneous && target.name === 'torii' && keyTarget !== undefined) {
          const keyCollected: ReportRow[] = rounds.get(keyTarget.name) ?? [];
          rounds.set(keyTarget.name, keyCollected);
          await Promise.all([
            measureOnce(target, measurement, collected, `${suffix} (with torii-key)`),
            measureOnce(keyTarget, measurement, keyCollected, `${suffix} (with torii)`, false),
          ]);
          continue;
        }
        await measureOnce(target, measurement, collected, suffix);
      }
    }
    const paired = pairedRounds(rounds.get('torii-key'), rounds.get('torii'));
    for (const [name, collected] of rounds) {
      const merged = medianOfRounds(collected);
      if (merged === undefined) continue;
      if (name === 'torii-key' && paired !== undefined) merged.row = { ...merged.row, ...paired };
      reportRows.push(merged);
    }
  }

  for (const target of [...targets].reverse()) {
    if (target.name === 'torii-key') continue; // the torii process
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

  // torii drained its usage queue on SIGTERM: every request made with the key has its ledger row by now.
  let ledger: LedgerCheck | undefined;
  if (benchKey !== undefined && services !== undefined) {
    try {
      const ledgerRows = await services.countLedgerRows(benchKey.id);
      ledger = {
        rows: ledgerRows,
        completedRequests: keyRequests.completed,
        uncountedAtMost: keyRequests.uncountedAtMost,
      };
    } catch (error) {
      problems.push(`could not count the ledger rows: ${(error as Error).message.split('\n')[0]}`);
    }
  }
  await services?.stop();
  const network = mergeNetworkWindows(networkWindows);
  const resultsPath = join(benchDirectory, 'results', 'latest.json');
  mkdirSync(dirname(resultsPath), { recursive: true });
  writeFileSync(
    resultsPath,
    JSON.stringify(
      resultsDocument(rows, benchKey === undefined ? undefined : networkDocument(network, ledger)),
      null,
      2,
    ) + '\n',
  );

  const output = [
    '',
    'torii bench: rps and latency from wrk (p50/p99 of every request), peak RSS of the process tree per row,',
    'cold start = exec to first chat 200; rps/floor and p50-floor_ms compare with the floor row of the same run;',
    'cpu0% = target core, cpu1% = load core (wrk, mock, PostgreSQL, Redis), wrk% and target% = those processes,',
    'mid-run.',
    '',
    formatTable(reportRows),
    '',
    'Load side:',
    formatLoadSide(reportRows),
    '',
    'Network calls around the torii-key rows (warm cache), from Redis INFO commandstats and pg_stat_database of the',
    "bench database (each Postgres backend publishes its counts at most once a second, so a run's Postgres figures",
    'can include up to a second of the run before it and miss up to a second of its own):',
    benchKey === undefined ? '  not measured: no virtual key' : formatNetwork(network, ledger),
    '',
    'Acceptance (chat non-stream, one core):',
    formatAcceptance(evaluateAcceptance(rows)),
    ...(problems.length === 0 ? [] : ['', 'Problems:', ...problems.map((problem) => `  ${problem}`)]),
    '',
    `Wrote ${resultsPath} (${rows.length} rows). Total bench time ${elapsedSeconds().toFixed(1)} s.`,
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
