import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { formatAllocationSummary, summarizeAllocations, type AllocationProfile } from './bench-allocation-summary.ts';
import type { ProbeEventLoopReport } from './bench-probe.ts';
import {
  compileBenchServer,
  freePort,
  installCleanup,
  processTree,
  readProcessTicks,
  startPinnedServer,
  stopProcess,
  ticksPerSecond,
  type ManagedProcess,
} from './bench-process.ts';
import { formatProfileSummary, sourceMapMapper, summarizeProfile, type CpuProfile } from './bench-profile-summary.ts';
import { benchModel, scenarioRequestBody, scenarios, type ScenarioName } from './bench-scenarios.ts';
import { startBenchServices, type BenchServices } from './bench-services.ts';
import { createVirtualKey } from './bench-virtual-key.ts';
import { assertWrkInstalled, runWrk } from './bench-wrk.ts';

/**
 * `pnpm bench:profile`: where the time goes, per shape. Each shape's process runs pinned to CPU 0 with
 * `bench-probe.ts` preloaded; after a warm-up, wrk drives it at a fixed rate on CPU 1 while the probe records a CPU
 * profile (V8's sampler, 100 us) and the event-loop delay of every second. Prints, per shape, the process CPU per
 * request, the event-loop stalls and the top self-time areas and functions (bundled frames mapped to the sources
 * through `dist/server.js.map`), and writes them with the raw `.cpuprofile` to `bench/results/profiles/`.
 *
 * Shapes: `floor` (the bench's bare proxy), `embedded` (dist/server.js with its embedded database, master key),
 * `production` (Postgres and Redis, a virtual key with limits and a budget), `lean` (`TORII_DATABASE=off`), and only
 * when listed `production-master` (production's setup driven with the master key: the key's own cost beside it).
 * Environment: BENCH_PROFILE_SHAPES (comma list, default all four), BENCH_PROFILE_SCENARIO (`chat`), BENCH_PROFILE_RATE
 * (1000), BENCH_PROFILE_SECONDS (10), TORII_BENCH_DIST (another build's `dist/server.js`, for before/after),
 * BENCH_PROFILE_OUT (the output directory), BENCH_PROFILE_NODE_FLAGS (extra flags for the process under test, such as
 * `--trace-gc-nvp`; its log is written beside the profile), BENCH_PROFILE_ALLOCATIONS=1 (also sample allocations
 * and print the bytes per request by function and by nearest torii frame).
 */

type Shape = 'floor' | 'embedded' | 'production' | 'production-master' | 'lean';
const allShapes: Shape[] = ['floor', 'embedded', 'production', 'lean'];
/** Shapes that run only when listed: `production-master` is production's setup driven with the master key. */
const listedOnly: Shape[] = ['production-master'];

const benchDirectory = dirname(fileURLToPath(import.meta.url));
const targetCpu = 0;
const loadCpu = 1;

const log = (message: string): void => void process.stdout.write(`${message}\n`);

function readShapes(): Shape[] {
  const listed = (process.env.BENCH_PROFILE_SHAPES ?? '').split(',').map((shape) => shape.trim());
  const shapes = listed.filter((shape): shape is Shape => [...allShapes, ...listedOnly].includes(shape as Shape));
  return shapes.length > 0 ? shapes : allShapes;
}

/** `scavenge 412 (1.9 ms, longest 0.4), mark-compact 3 (...)`, with the pause time per request. */
function formatGarbageCollections(report: ProbeEventLoopReport, requests: number): string {
  const kinds = Object.entries(report.garbageCollections);
  if (kinds.length === 0) return 'none';
  const total = kinds.reduce((sum, [, tally]) => sum + tally.totalMs, 0);
  const each = kinds.map(([kind, tally]) => `${kind} ${tally.count} (${tally.totalMs} ms, longest ${tally.maxMs})`);
  return `${each.join(', ')} = ${((total * 1_000) / Math.max(1, requests)).toFixed(2)} us per request`;
}

async function main(): Promise<void> {
  assertWrkInstalled();
  const shapes = readShapes();
  const scenario = (process.env.BENCH_PROFILE_SCENARIO ?? 'chat') as ScenarioName;
  const rate = Number(process.env.BENCH_PROFILE_RATE ?? 1_000);
  const seconds = Number(process.env.BENCH_PROFILE_SECONDS ?? 10);
  const distServer = resolve(process.env.TORII_BENCH_DIST ?? join(benchDirectory, '..', 'dist', 'server.js'));
  const outputDirectory = resolve(process.env.BENCH_PROFILE_OUT ?? join(benchDirectory, 'results', 'profiles'));
  mkdirSync(outputDirectory, { recursive: true });
  const temporaryDirectory = mkdtempSync(join(tmpdir(), 'torii-profile-'));
  installCleanup(() => rmSync(temporaryDirectory, { recursive: true, force: true }));
  const bodyFile = join(temporaryDirectory, 'body.json');
  writeFileSync(bodyFile, scenarioRequestBody(scenario));
  const masterKey = `sk-torii-profile-${crypto.randomUUID()}`;
  const probe = join(benchDirectory, 'bench-probe.ts');
  const sampleAllocations = process.env.BENCH_PROFILE_ALLOCATIONS === '1';
  const nodeFlags = (process.env.BENCH_PROFILE_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '');

  const services: BenchServices | undefined = shapes.some((shape) => shape.startsWith('production'))
    ? await startBenchServices(loadCpu)
    : undefined;
  const mockScript = await compileBenchServer(join(benchDirectory, 'bench-mock-upstream.ts'), temporaryDirectory);
  const floorScript = await compileBenchServer(join(benchDirectory, 'bench-floor-proxy.ts'), temporaryDirectory);
  const mockPort = await freePort();
  const mock = await startPinnedServer({
    name: 'mock',
    cpu: loadCpu,
    command: [process.execPath, mockScript],
    environment: { PORT: String(mockPort) },
    workingDirectory: temporaryDirectory,
    temporaryDirectory,
    port: mockPort,
    chatBody: scenarioRequestBody('chat'),
    authorization: `Bearer ${masterKey}`,
  });
  const mockURL = `http://127.0.0.1:${mockPort}`;
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

  const reports: string[] = [];
  for (const shape of shapes) {
    const shapeDirectory = mkdtempSync(join(temporaryDirectory, `${shape}-`));
    const probeDirectory = join(shapeDirectory, 'probe');
    mkdirSync(probeDirectory);
    const port = await freePort();
    const environment: Record<string, string> = {
      PORT: String(port),
      BENCH_PROBE_DIRECTORY: probeDirectory,
      ...(sampleAllocations ? { BENCH_PROBE_ALLOCATIONS: '1' } : {}),
      BENCH_UPSTREAM_URL: mockURL,
      TORII_WORKERS: '1',
      TORII_MASTER_KEY: masterKey,
      TORII_CONFIG: configPath,
      TORII_DATA_DIR: shapeDirectory,
      ...(shape === 'lean' ? { TORII_DATABASE: 'off' } : {}),
      ...((shape === 'production' || shape === 'production-master') && services !== undefined
        ? { DATABASE_URL: services.databaseUrl, REDIS_URL: services.redisUrl }
        : {}),
    };
    const script = shape === 'floor' ? floorScript : distServer;
    const { managed, coldStart } = await startPinnedServer({
      name: shape,
      cpu: targetCpu,
      command: [process.execPath, ...nodeFlags, '--import', probe, script],
      environment,
      workingDirectory: shapeDirectory,
      temporaryDirectory,
      port,
      chatBody: scenarioRequestBody('chat'),
      authorization: `Bearer ${masterKey}`,
    });
    log(`${shape}: up, first chat 200 after ${coldStart.firstChatSeconds.toFixed(3)} s`);
    const authorization =
      shape === 'production'
        ? `Bearer ${(await createVirtualKey(port, `Bearer ${masterKey}`)).key}`
        : `Bearer ${masterKey}`;
    let wrkRuns = 0;
    const wrk = (connections: number, duration: number, fixedRate?: number) =>
      runWrk({
        url: `http://127.0.0.1:${port}${scenarios[scenario].path}`,
        connections,
        durationSeconds: duration,
        bodyFile,
        authorization,
        cpu: loadCpu,
        logPath: join(shapeDirectory, `wrk-${++wrkRuns}.log`),
        ...(fixedRate === undefined ? {} : { rate: fixedRate }),
      });
    await wrk(32, 6);
    await wrk(20, 3, rate);
    const pids = processTree(managed.pid);
    process.kill(managed.pid, 'SIGUSR2');
    const ticksBefore = readProcessTicks(pids);
    const { result } = await wrk(20, seconds, rate);
    const ticks = readProcessTicks(processTree(managed.pid)) - ticksBefore;
    process.kill(managed.pid, 'SIGUSR2');
    const done = join(probeDirectory, `${managed.pid}.done`);
    for (let waited = 0; !existsSync(done); waited += 50) {
      if (waited > 60_000) throw new Error(`${shape}: the probe wrote no profile within 60 s`);
      await sleep(50);
    }
    const profile = JSON.parse(readFileSync(join(probeDirectory, `${managed.pid}.cpuprofile`), 'utf8')) as CpuProfile;
    const eventLoop = JSON.parse(
      readFileSync(join(probeDirectory, `${managed.pid}.eventloop.json`), 'utf8'),
    ) as ProbeEventLoopReport;
    const cpuMilliseconds = (ticks * 1_000) / ticksPerSecond;
    const report = [
      `== ${shape} (${scenario}, ${rate} rps for ${seconds} s, ${distServer === join(benchDirectory, '..', 'dist', 'server.js') ? 'dist/server.js' : distServer})`,
      `wrk: ${result.requestsPerSecond.toFixed(0)} rps, p50 ${result.latencyMilliseconds.p50.toFixed(3)} ms, p99 ` +
        `${result.latencyMilliseconds.p99.toFixed(3)} ms, max ${result.latencyMilliseconds.max.toFixed(1)} ms, ${result.errors} errors`,
      `process CPU ${(cpuMilliseconds / 1_000).toFixed(2)} s = ${(cpuMilliseconds / Math.max(1, result.requests)).toFixed(3)} ms per request ` +
        `(profiler on); cold start ${coldStart.firstChatSeconds.toFixed(3)} s`,
      `event-loop delay: p50 ${eventLoop.p50} ms, p99 ${eventLoop.p99} ms, max ${eventLoop.max} ms; longest per second: ` +
        eventLoop.maxPerSecond.join(' '),
      `garbage collection (pauses): ${formatGarbageCollections(eventLoop, result.requests)}; heap used ` +
        `${eventLoop.heapUsedMb.start} MB at the start, ${eventLoop.heapUsedMb.end} MB at the end`,
      formatProfileSummary(summarizeProfile(profile, sourceMapMapper()), { requests: result.requests }),
      ...(sampleAllocations
        ? [
            formatAllocationSummary(
              summarizeAllocations(
                JSON.parse(
                  readFileSync(join(probeDirectory, `${managed.pid}.heapprofile`), 'utf8'),
                ) as AllocationProfile,
                sourceMapMapper(),
              ),
              { requests: result.requests },
            ),
          ]
        : []),
      '',
    ].join('\n');
    log(report);
    reports.push(report);
    writeFileSync(join(outputDirectory, `${shape}-${scenario}.txt`), report);
    writeFileSync(
      join(outputDirectory, `${shape}-${scenario}.cpuprofile`),
      readFileSync(join(probeDirectory, `${managed.pid}.cpuprofile`)),
    );
    await stopProcess(managed, { signal: 'SIGTERM', timeoutMs: 10_000 });
    writeFileSync(join(outputDirectory, `${shape}-${scenario}.log`), readFileSync(managed.logPath));
  }
  await stopProcess(mock.managed as ManagedProcess, { signal: 'SIGTERM', timeoutMs: 3_000 });
  await services?.stop();
  log(`wrote ${reports.length} summaries to ${outputDirectory}`);
}

try {
  await main();
} catch (error) {
  process.stderr.write(`bench:profile failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
} finally {
  process.exit();
}
