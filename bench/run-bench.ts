import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { evaluateAcceptance, formatAcceptance } from './bench-checks.ts';
import { heyInstalled } from './bench-hey.ts';
import { measureRun, type MeasureContext } from './bench-measure.ts';
import {
  formatNetwork,
  mergeNetworkWindows,
  networkDocument,
  type LedgerCheck,
  type NetworkWindow,
} from './bench-network.ts';
import {
  describePhase,
  generatorOf,
  measurementPlan,
  plannedSeconds,
  processOf,
  quietStealPercent,
  readSettings,
  roundOrder,
  shapeNames,
  targetNames,
  warmUpPlan,
  type ShapeName,
  type TargetName,
} from './bench-plan.ts';
import { compileBenchServer, freePort, installCleanup, logTail, stopProcess } from './bench-process.ts';
import {
  crossChecks,
  mergeRounds,
  peakRssByShape,
  quietRounds,
  roundRow,
  summarizeScenario,
  summaryDocument,
  type ReportRow,
  type RunResult,
  type ServiceCounts,
} from './bench-report.ts';
import { scenarioNames, scenarioRequestBody, scenarios, type ScenarioName } from './bench-scenarios.ts';
import { startBenchServices, type BenchServices } from './bench-services.ts';
import { formatCrossCheck, formatLoadSide, formatRowsTable, formatScenarioTable } from './bench-tables.ts';
import { describeShape, startShape, startTarget, writeGatewayConfig, type LiveTarget } from './bench-targets.ts';
import { createVirtualKey } from './bench-virtual-key.ts';
import { assertWrkInstalled, runWrk } from './bench-wrk.ts';

/**
 * `pnpm bench`: measures the gateway in the shapes people run (`embedded`, `production`, `lean`, each its own
 * `node dist/server.js` with one worker) against the floor (a bare node:http + undici proxy) in one run on loopback,
 * and prints the report. The proxies are pinned to CPU 0; wrk, hey, the first-byte client, the mock upstream,
 * PostgreSQL and Redis to CPU 1. Every measurement runs in interleaved rounds (the order reversed every other round),
 * so the CPU's speed drift affects every target alike. See bench/README.md for the shapes, the measurements, the
 * columns, the checks and the JSON format.
 */

const benchDirectory = dirname(fileURLToPath(import.meta.url));
const repositoryRoot = dirname(benchDirectory);
const targetCpu = 0;
const loadCpu = 1;

const startedAt = performance.now();
const elapsedSeconds = (): number => (performance.now() - startedAt) / 1_000;
const log = (message: string): void => {
  process.stdout.write(`[${elapsedSeconds().toFixed(1).padStart(5)}s] ${message}\n`);
};
const rounded = (value: number | null | undefined, digits: number): number | null =>
  value === null || value === undefined ? null : Number(value.toFixed(digits));
const firstLine = (error: unknown): string => (error as Error).message.split('\n')[0] ?? '';

async function main(): Promise<number> {
  assertWrkInstalled();
  const settings = readSettings(process.env);
  const temporaryDirectory = mkdtempSync(join(tmpdir(), 'torii-bench-'));
  installCleanup(() => rmSync(temporaryDirectory, { recursive: true, force: true }));
  const masterKey = `sk-torii-bench-${crypto.randomUUID()}`;
  const masterAuthorization = `Bearer ${masterKey}`;
  const bodyFiles = new Map<ScenarioName, string>();
  for (const scenario of scenarioNames) {
    const path = join(temporaryDirectory, `${scenario}.json`);
    writeFileSync(path, scenarioRequestBody(scenario));
    bodyFiles.set(scenario, path);
  }
  const override = process.env.TORII_BENCH_COMMAND?.trim() || undefined;
  const distServer = join(repositoryRoot, 'dist', 'server.js');
  const cpuModel = /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';
  const planned = plannedSeconds(settings, measurementPlan(settings));
  log(
    `torii bench: node ${process.version}, ${cpuModel}; floor and shapes on CPU ${targetCpu}, ` +
      `wrk, hey, the first-byte client, mock, PostgreSQL and Redis on CPU ${loadCpu}`,
  );
  log(`planned total ~${planned.toFixed(0)} s (BENCH_DURATION_SCALE ${settings.scale})`);

  // PostgreSQL (initdb) and Redis start while the mock, the floor and the first-byte client compile.
  const servicesStarting = startBenchServices(loadCpu);
  servicesStarting.catch(() => {});
  const compile = (name: string) => compileBenchServer(join(benchDirectory, name), temporaryDirectory);
  const mockScript = await compile('bench-mock-upstream.ts');
  const floorScript = await compile('bench-floor-proxy.ts');
  const firstByteScript = await compile('bench-first-byte.ts');
  const problems: string[] = [];
  let services: BenchServices | undefined;
  try {
    services = await servicesStarting;
    log(
      `PostgreSQL (pid ${services.postgresPid}) and Redis (pid ${services.redisPid}) up, pinned to CPU ${loadCpu}, ${services.scheduling}`,
    );
  } catch (error) {
    problems.push(`production not measured: ${firstLine(error)}`);
  }
  const mockPort = await freePort();
  const mockURL = `http://127.0.0.1:${mockPort}`;
  const common = { temporaryDirectory, authorization: masterAuthorization, log, workingDirectory: repositoryRoot };
  const live = new Map<TargetName, LiveTarget>();
  live.set(
    'mock',
    await startTarget({
      ...common,
      name: 'mock',
      cpu: loadCpu,
      command: [process.execPath, mockScript],
      environment: { PORT: String(mockPort) },
      port: mockPort,
    }),
  );
  const floorPort = await freePort();
  live.set(
    'floor',
    await startTarget({
      ...common,
      name: 'floor',
      cpu: targetCpu,
      command: [process.execPath, floorScript],
      environment: { PORT: String(floorPort), BENCH_UPSTREAM_URL: mockURL },
      port: floorPort,
    }),
  );

  const configPath = writeGatewayConfig(temporaryDirectory, mockURL);
  let benchKeyId: string | undefined;
  if (override === undefined && !existsSync(distServer)) {
    problems.push(`no shape measured: ${distServer} does not exist: run \`pnpm build\` (or set TORII_BENCH_COMMAND)`);
  } else {
    if (override !== undefined) log(`every shape is the stand-in command: ${override}`);
    for (const shape of shapeNames) {
      if (shape === 'production' && services === undefined) continue;
      try {
        const target = await startShape({
          shape,
          cpu: targetCpu,
          port: await freePort(),
          distServer,
          override,
          repositoryRoot,
          temporaryDirectory,
          configPath,
          masterKey,
          mockURL,
          floorScript,
          services,
          log,
        });
        log(`  ${shape}: ${describeShape(shape)}`);
        live.set(shape, target);
        if (shape === 'lean') live.set('lean-ten', { ...target, name: 'lean-ten', coldStart: null });
        if (shape === 'production') {
          // The virtual key goes through POST /admin/keys; production is driven with it, production-master with the
          // master key (the same process).
          const created = await createVirtualKey(target.port, masterAuthorization);
          benchKeyId = created.id;
          live.set(shape, { ...target, authorization: `Bearer ${created.key}` });
          live.set('production-master', { ...target, name: 'production-master', coldStart: null });
          log(`  production: virtual key ${created.id} created (limits and budget the run never reaches), chat 200`);
        }
      } catch (error) {
        live.delete(shape);
        problems.push(`${shape} not measured: ${firstLine(error)}`);
        log(`${shape} NOT measured: ${(error as Error).message}`);
      }
    }
  }
  const started = shapeNames.filter((shape) => live.has(shape));
  // A process that exits before the end was not stopped by the bench: say when, and how (a signal from outside, such
  // as another job's cleanup on a shared machine, shows as SIGTERM's graceful exit code 0).
  let stopping = false;
  for (const [name, target] of live) {
    if (name === 'production-master' || name === 'lean-ten') continue;
    void target.managed.exited.then(({ code, signal }) => {
      if (stopping) return;
      const message = `${name} exited on its own at ${elapsedSeconds().toFixed(1)} s (code ${code}, signal ${signal})`;
      problems.push(`${message}; later runs against it were skipped`);
      log(`${message}; the end of its log:\n${logTail(target.managed, 600)}`);
    });
  }
  const plan = measurementPlan(settings, started);
  if (!heyInstalled()) {
    problems.push('hey is not installed (`apt-get install hey`): no cross-check');
    const hey = plan.findIndex((phase) => phase.kind === 'hey');
    if (hey >= 0) plan.splice(hey, 1);
  }
  log(`measuring: floor, ${started.join(', ') || 'no shape'}; ${plan.length} phases`);

  // Requests made with the virtual key (the creation check's one included), against the ledger at the end.
  const keyRequests = { completed: 1, uncountedAtMost: 0 };
  for (const warmUp of warmUpPlan(settings, started)) {
    const target = live.get(warmUp.target);
    if (target === undefined) continue;
    try {
      const { result } = await runWrk({
        url: `http://127.0.0.1:${target.port}${scenarios[warmUp.scenario].path}`,
        connections: settings.maxConnections,
        durationSeconds: warmUp.seconds,
        bodyFile: bodyFiles.get(warmUp.scenario)!,
        authorization: target.authorization,
        cpu: loadCpu,
        logPath: join(temporaryDirectory, `warm-up-${warmUp.target}-${warmUp.scenario}.log`),
      });
      if (warmUp.target === 'production') {
        keyRequests.completed += result.requests;
        keyRequests.uncountedAtMost += settings.maxConnections;
      }
      log(
        `warm-up ${warmUp.target} ${warmUp.scenario}: ${result.requestsPerSecond.toFixed(0)} rps, ${result.errors} errors`,
      );
    } catch (error) {
      problems.push(`warm-up ${warmUp.target} ${warmUp.scenario}: ${firstLine(error)}`);
    }
  }

  const context: MeasureContext = {
    temporaryDirectory,
    bodyFiles,
    mockPid: live.get('mock')!.managed.pid,
    targetCpu,
    loadCpu,
    firstByteScript,
    services,
    floor: live.get('floor'),
    live,
  };
  const reportRows: ReportRow[] = [];
  const networkWindows: NetworkWindow[] = [];
  for (const phase of plan) {
    const label = describePhase(phase);
    if (
      phase.informational === true &&
      elapsedSeconds() + phase.seconds * phase.targets.length > settings.budgetSeconds
    ) {
      problems.push(`${label}: skipped, over the ${settings.budgetSeconds} s budget`);
      log(`${label}: skipped (time budget)`);
      continue;
    }
    const runs = new Map<TargetName, RunResult[]>();
    for (let round = 0; round < phase.rounds + (phase.extraRounds ?? 0); round++) {
      if (round >= phase.rounds) {
        // Extra rounds while the hypervisor disturbed too many (see quietStealPercent).
        const quiet = quietRounds(runs.values(), quietStealPercent).length;
        if (quiet >= phase.rounds) break;
        log(`${label}: ${quiet} of ${round} rounds quiet (steal <= ${quietStealPercent}%), one more`);
      }
      const order = [...(round === 0 ? (phase.once ?? []) : []), ...roundOrder(phase, round)];
      for (const name of order) {
        const target = live.get(name);
        const runLabel = `${name.padEnd(17)} ${label}${phase.rounds > 1 ? ` (round ${round + 1}/${phase.rounds}${round >= phase.rounds ? ', extra' : ''})` : ''}`;
        if (target === undefined) continue;
        if (target.managed.hasExited()) {
          problems.push(`${runLabel}: skipped, ${processOf(name)} has exited`);
          continue;
        }
        try {
          const measured = await measureRun(context, target, phase, round + 1);
          runs.set(name, [...(runs.get(name) ?? []), measured.run]);
          if (measured.network !== undefined) networkWindows.push(measured.network);
          if (name === 'production') {
            keyRequests.completed += measured.run.requests + measured.unmeasuredRequests;
            keyRequests.uncountedAtMost += measured.uncountedAtMost;
          }
          const { run } = measured;
          log(
            `${runLabel}: ${run.rps.toFixed(0)} rps, p50 ${run.p50_ms.toFixed(3)} ms, p99 ${run.p99_ms.toFixed(3)} ms, ` +
              `${run.errors} errors${measured.errorDetail}, ${run.cpu_ms_per_request?.toFixed(3) ?? '-'} CPU ms/request, ` +
              `steal ${run.steal_percent?.toFixed(1) ?? '-'}%` +
              (run.load === undefined
                ? ''
                : ` (wrk ${run.load.wrkPercent.toFixed(0)}%, target ${run.load.targetPercent.toFixed(0)}%)`),
          );
        } catch (error) {
          problems.push(`${runLabel}: ${firstLine(error)}`);
          log(`${runLabel}: FAILED ${(error as Error).message}`);
        }
      }
    }
    for (const name of targetNames) {
      const merged = mergeRounds(
        {
          target: name,
          scenario: phase.scenario,
          measurement: phase.kind,
          generator: generatorOf(phase.kind),
          connections: phase.connections,
          ...(phase.rate === undefined ? {} : { rate: phase.rate }),
          ...(phase.kind === 'first-byte' && name !== 'floor' ? { paired_with: phase.base ?? 'floor' } : {}),
        },
        runs.get(name) ?? [],
        live.get(name)?.coldStart?.firstChatSeconds ?? null,
      );
      if (merged !== undefined) reportRows.push(merged);
    }
  }

  stopping = true;
  // SIGTERM every process, the shapes first; production drains its usage queue, so its ledger is complete after.
  const stopTimes: Partial<Record<ShapeName, number>> = {};
  for (const name of [...shapeNames, 'floor', 'mock'] as const) {
    const target = live.get(name);
    if (target === undefined) continue;
    const stopped = await stopProcess(target.managed, {
      signal: 'SIGTERM',
      timeoutMs: name === 'floor' || name === 'mock' ? 3_000 : 10_000,
    });
    const how = stopped.graceful ? `exited (code ${stopped.code}, signal ${stopped.signal})` : 'did not exit, killed';
    log(`${name}: SIGTERM -> ${how} after ${stopped.milliseconds.toFixed(0)} ms`);
    if (name !== 'floor' && name !== 'mock') {
      stopTimes[name] = stopped.milliseconds;
      if (!stopped.graceful) problems.push(`${name} did not exit within 10 s of SIGTERM`);
    }
  }
  let ledger: LedgerCheck | undefined;
  if (benchKeyId !== undefined && services !== undefined) {
    try {
      ledger = {
        rows: await services.countLedgerRows(benchKeyId),
        completedRequests: keyRequests.completed,
        uncountedAtMost: keyRequests.uncountedAtMost,
      };
    } catch (error) {
      problems.push(`could not count the ledger rows: ${firstLine(error)}`);
    }
  }
  await services?.stop();

  const rows = reportRows.map((reportRow) => reportRow.row);
  const network = mergeNetworkWindows(networkWindows);
  const serviceCounts: ServiceCounts[] = network.map((window) => {
    const redis = Object.values(window.redisCommands).reduce((sum, calls) => sum + calls, 0);
    const per1000 = (count: number): number => (window.requests > 0 ? (count * 1_000) / window.requests : 0);
    return {
      scenario: window.scenario,
      redisCommandsPer1000: per1000(redis),
      postgresTransactionsPer1000: per1000(window.postgresTransactions),
    };
  });
  const summaries = (['chat', 'chat-stream'] as const).map((scenario) => ({
    scenario,
    lines: summarizeScenario(reportRows, scenario, serviceCounts),
  }));
  const checks = evaluateAcceptance(rows);
  const totalSeconds = elapsedSeconds();
  const resultsPath = join(benchDirectory, 'results', 'latest.json');
  mkdirSync(dirname(resultsPath), { recursive: true });
  const document = {
    generated_at: new Date().toISOString(),
    machine: { node: process.version, cpu: cpuModel, target_cpu: targetCpu, load_cpu: loadCpu },
    timing: { planned_s: Math.round(planned), actual_s: Math.round(totalSeconds) },
    settings,
    shapes: shapeNames.map((shape) => ({
      name: shape,
      settings: describeShape(shape),
      measured: live.has(shape),
      ready_s: rounded(live.get(shape)?.coldStart?.readySeconds, 3),
      cold_start_s: rounded(live.get(shape)?.coldStart?.firstChatSeconds, 3),
      peak_rss_mb: rounded(peakRssByShape(rows).find((each) => each.target === shape)?.peakRssMb, 1),
      stop_ms: stopTimes[shape] === undefined ? null : Math.round(stopTimes[shape]),
    })),
    summary: Object.fromEntries(summaries.map(({ scenario, lines }) => [scenario, lines.map(summaryDocument)])),
    checks,
    network: benchKeyId === undefined ? null : networkDocument(network, ledger),
    problems,
    rows: rows.map(roundRow),
  };
  writeFileSync(resultsPath, JSON.stringify(document, null, 2) + '\n');

  const rssLine = peakRssByShape(rows)
    .map((each) => `${each.target} ${each.peakRssMb === null ? '-' : each.peakRssMb.toFixed(1)} MB`)
    .join(', ');
  const output = [
    '',
    'torii bench: one table per scenario, medians of 3 interleaved rounds. max = 32 connections as fast as they go;',
    `@rate = ${settings.rate} rps over ${settings.rateConnections} connections; c1 = one connection; ttfb = time to first byte at c1`,
    '(bench-first-byte.ts). x_floor, p99-floor, c1_added_p50 and ttfb-floor are medians of the per-round comparisons',
    "with the floor; (key ...) = production minus production-master at c1. cpu_ms/req = the process tree's user +",
    'system CPU per request; redis/1k, pg/1k = commands and transactions per 1,000 requests at the fixed rate (n.a.: no',
    'external services); the load-side columns (cpu0% ... other%) are from the max run.',
    ...summaries.flatMap(({ scenario, lines }) => [
      '',
      `${scenario}:`,
      formatScenarioTable(lines, { stream: scenario === 'chat-stream' }),
    ]),
    '',
    `Peak RSS per shape (highest row): ${rssLine}`,
    '',
    'Every row:',
    formatRowsTable(reportRows),
    '',
    'Load side:',
    formatLoadSide(reportRows),
    '',
    'Cross-check, chat at the fixed rate: wrk (median of its rounds) beside hey (one run; hey resolves 0.1 ms):',
    formatCrossCheck(crossChecks(rows)),
    '',
    'Network calls of production at the fixed rate (virtual key, warm cache), from Redis INFO commandstats and',
    "pg_stat_database (each Postgres backend publishes its counts at most once a second, so a run's Postgres",
    'figures can include up to a second of the run before it and miss up to a second of its own):',
    benchKeyId === undefined ? '  not measured: no virtual key' : formatNetwork(network, ledger),
    '',
    'Acceptance ("close to the floor in every shape people run"):',
    formatAcceptance(checks),
    ...(problems.length === 0 ? [] : ['', 'Problems:', ...problems.map((problem) => `  ${problem}`)]),
    '',
    `Wrote ${resultsPath} (${rows.length} rows). Planned ~${planned.toFixed(0)} s, actual ${totalSeconds.toFixed(1)} s.`,
    '',
  ];
  process.stdout.write(output.join('\n'));
  return started.length === 0 ? 1 : 0;
}

try {
  process.exitCode = await main();
} catch (error) {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
} finally {
  process.exit();
}
