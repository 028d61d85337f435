import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { shapeNames, type ShapeName } from './bench-plan.ts';
import {
  compileBenchServer,
  freePort,
  installCleanup,
  processTree,
  readPeakRssBytes,
  readRssBytes,
  resetPeakRss,
  stopProcess,
} from './bench-process.ts';
import { scenarioRequestBody, scenarios } from './bench-scenarios.ts';
import { startBenchServices, type BenchServices } from './bench-services.ts';
import { defaultSoakRule, formatSoakSeries, soakVerdict, type SoakSample } from './bench-soak.ts';
import { describeShape, startShape, startTarget, writeGatewayConfig } from './bench-targets.ts';
import { createVirtualKey } from './bench-virtual-key.ts';
import { assertWrkInstalled, runWrk } from './bench-wrk.ts';

/**
 * `pnpm bench:soak`: one shape (`BENCH_SOAK_SHAPE`, default `embedded`) at a fixed rate (`BENCH_SOAK_RATE`, default
 * 1,000 rps of `chat` over `BENCH_SOAK_CONNECTIONS`, default 20) for `BENCH_SOAK_SECONDS` (default 600), pinned like
 * `pnpm bench` (the shape on CPU 0; wrk, the mock, PostgreSQL and Redis on CPU 1). The load runs in 10 s wrk slices;
 * after each the process tree's RSS is sampled. Prints the series and the verdict (`bench-soak.ts`: flat when the
 * last third's highest RSS after a 60 s warm-up is within 10% and within 20 MB of the first third's), and writes
 * `bench/results/soak-latest.json`.
 */

const benchDirectory = dirname(fileURLToPath(import.meta.url));
const repositoryRoot = dirname(benchDirectory);
const targetCpu = 0;
const loadCpu = 1;
const sliceSeconds = 10;

const startedAt = performance.now();
const log = (message: string): void => {
  process.stdout.write(`[${((performance.now() - startedAt) / 1_000).toFixed(1).padStart(6)}s] ${message}\n`);
};

async function main(): Promise<number> {
  assertWrkInstalled();
  const shape = (process.env.BENCH_SOAK_SHAPE ?? 'embedded') as ShapeName;
  if (!shapeNames.includes(shape)) throw new Error(`BENCH_SOAK_SHAPE must be one of ${shapeNames.join(', ')}`);
  const seconds = Number(process.env.BENCH_SOAK_SECONDS ?? 600);
  const rate = Number(process.env.BENCH_SOAK_RATE ?? 1_000);
  const connections = Number(process.env.BENCH_SOAK_CONNECTIONS ?? 20);
  const temporaryDirectory = mkdtempSync(join(tmpdir(), 'torii-soak-'));
  installCleanup(() => rmSync(temporaryDirectory, { recursive: true, force: true }));
  const masterKey = `sk-torii-bench-${crypto.randomUUID()}`;
  const bodyFile = join(temporaryDirectory, 'chat.json');
  writeFileSync(bodyFile, scenarioRequestBody('chat'));
  log(`soak: ${shape} (${describeShape(shape)}), chat at ${rate} rps over ${connections} connections for ${seconds} s`);

  let services: BenchServices | undefined;
  if (shape === 'production') services = await startBenchServices(loadCpu);
  const mockScript = await compileBenchServer(join(benchDirectory, 'bench-mock-upstream.ts'), temporaryDirectory);
  const floorScript = await compileBenchServer(join(benchDirectory, 'bench-floor-proxy.ts'), temporaryDirectory);
  const mockPort = await freePort();
  const mockURL = `http://127.0.0.1:${mockPort}`;
  const mock = await startTarget({
    name: 'mock',
    cpu: loadCpu,
    command: [process.execPath, mockScript],
    environment: { PORT: String(mockPort) },
    workingDirectory: repositoryRoot,
    temporaryDirectory,
    port: mockPort,
    authorization: `Bearer ${masterKey}`,
    log,
  });
  let target = await startShape({
    shape,
    cpu: targetCpu,
    port: await freePort(),
    distServer: join(repositoryRoot, 'dist', 'server.js'),
    override: process.env.TORII_BENCH_COMMAND?.trim() || undefined,
    repositoryRoot,
    temporaryDirectory,
    configPath: writeGatewayConfig(temporaryDirectory, mockURL),
    masterKey,
    mockURL,
    floorScript,
    services,
    log,
  });
  if (shape === 'production') {
    const created = await createVirtualKey(target.port, `Bearer ${masterKey}`);
    target = { ...target, authorization: `Bearer ${created.key}` };
    log(`production: virtual key ${created.id} created`);
  }

  const samples: SoakSample[] = [];
  const slices = Math.max(1, Math.ceil(seconds / sliceSeconds));
  const loadStartedAt = performance.now();
  for (let slice = 0; slice < slices; slice++) {
    if (target.managed.hasExited()) {
      log(`${shape} exited during the soak`);
      break;
    }
    resetPeakRss(processTree(target.managed.pid));
    const { result } = await runWrk({
      url: `http://127.0.0.1:${target.port}${scenarios.chat.path}`,
      connections,
      durationSeconds: sliceSeconds,
      bodyFile,
      authorization: target.authorization,
      rate,
      cpu: loadCpu,
      logPath: join(temporaryDirectory, `wrk-${slice}.log`),
    });
    const tree = processTree(target.managed.pid);
    const sample: SoakSample = {
      t_s: (performance.now() - loadStartedAt) / 1_000,
      rss_mb: readRssBytes(tree) / (1_024 * 1_024),
      peak_rss_mb: readPeakRssBytes(tree) / (1_024 * 1_024),
      rps: result.requestsPerSecond,
      p50_ms: result.latencyMilliseconds.p50,
      p99_ms: result.latencyMilliseconds.p99,
      errors: result.errors,
    };
    samples.push(sample);
    log(
      `t ${sample.t_s.toFixed(0)} s: RSS ${sample.rss_mb.toFixed(1)} MB (peak ${sample.peak_rss_mb.toFixed(1)}), ` +
        `${sample.rps.toFixed(0)} rps, p99 ${sample.p99_ms.toFixed(3)} ms, ${sample.errors} errors`,
    );
  }
  await stopProcess(target.managed, { signal: 'SIGTERM', timeoutMs: 10_000 });
  await stopProcess(mock.managed, { signal: 'SIGTERM', timeoutMs: 3_000 });
  await services?.stop();

  const verdict = soakVerdict(samples);
  const resultsPath = join(benchDirectory, 'results', 'soak-latest.json');
  mkdirSync(dirname(resultsPath), { recursive: true });
  writeFileSync(
    resultsPath,
    JSON.stringify(
      {
        generated_at: new Date().toISOString(),
        shape,
        scenario: 'chat',
        rate,
        connections,
        seconds,
        rule: defaultSoakRule,
        verdict,
        samples: samples.map((sample) => ({
          ...sample,
          t_s: Number(sample.t_s.toFixed(1)),
          rss_mb: Number(sample.rss_mb.toFixed(1)),
          peak_rss_mb: Number(sample.peak_rss_mb.toFixed(1)),
          rps: Number(sample.rps.toFixed(1)),
          p50_ms: Number(sample.p50_ms.toFixed(3)),
          p99_ms: Number(sample.p99_ms.toFixed(3)),
        })),
      },
      null,
      2,
    ) + '\n',
  );
  process.stdout.write(
    [
      '',
      `RSS of ${shape}'s process tree every ${sliceSeconds} s at ${rate} rps (w = warm-up, not judged):`,
      formatSoakSeries(samples),
      '',
      `Verdict: ${verdict.verdict.toUpperCase()}: ${verdict.detail}`,
      `Wrote ${resultsPath}.`,
      '',
    ].join('\n'),
  );
  return 0;
}

try {
  process.exitCode = await main();
} catch (error) {
  process.stderr.write(`soak failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
} finally {
  process.exit();
}
