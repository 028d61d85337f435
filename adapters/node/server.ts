import cluster from 'node:cluster';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Registry } from 'prom-client';
import type { GatewayLogger } from '../../src/services.ts';
import { jsonLogLine } from '../../src/observability/json-logger.ts';
import { gatewayDirectRoutes } from '../../src/gateway.ts';
import { readDatabaseSetting } from '../shared/database-setting.ts';
import { resolveMasterKey } from '../shared/resolve-master-key.ts';
import { formatStartupFailure } from '../shared/startup-error.ts';
import { boundHeapGrowth } from './heap-growth.ts';
import { capYoungGeneration, scavengeOnOneThread, scavengesOnOneThread, semiSpaceCap } from './young-generation.ts';
import { runClusterPrimary, type WorkerStartupFailedMessage } from './cluster-primary.ts';
import { clusterInvalidationChannel, usageLedgerChannel } from './cluster-remote-services.ts';
import { broadcastToWorkers, createClusterRpcClient, serveClusterRpc } from './cluster-rpc.ts';
import { createWorkerMetricsExposition } from './cluster-metrics.ts';
import { heartbeatIntervalMs, startWorkerHeartbeat } from './cluster-worker-watch.ts';
import { readNodeServerSettings, type NodeServerSettings } from './node-environment.ts';
import {
  checkRedisAtStart,
  openClusterPrimaryDataPlane,
  openClusterWorkerDataPlane,
  openSingleProcessDataPlane,
} from './node-data-plane.ts';
import { createCircuitRelay, createClusterCircuitBus } from './circuit-buses.ts';
import { commandLineUsage, parseCommandLine } from './command-line.ts';
import { runConfigCheck } from './config-check-command.ts';
import { createNodeGateway, nodeProcessAccounting, nodeProcessServices, readNodeTextFile } from './node-gateway.ts';
import { packageVersion } from './package-version.ts';
import { startNodeHttpServer } from './node-http-server.ts';
import { announceGateway, listeningUrl } from '../server-kit/gateway-announcement.ts';
import { startGatewayProcess, usageFlushTimeoutMs, type ServedGateway } from '../server-kit/start-gateway-process.ts';
import { registerUsageQueueMetrics } from './process-health-metrics.ts';
import { startProcessWatchdog } from './process-watchdog.ts';
import { readTraceExportSettings } from '../shared/trace-export-settings.ts';
import { createPrometheusMetrics, registerProcessMetrics } from './prometheus-metrics.ts';
import { openNodeLogging, type NodeLogging } from './node-logging.ts';

/**
 * `node dist/server.js` (`torii-gateway`, the package's bin): a cluster primary forking one worker per core
 * (TORII_WORKERS overrides; 1 = a single process, no cluster), each serving the gateway on PORT (default 8787).
 */
async function main(): Promise<void> {
  // `torii-gateway --config torii.yaml` (the package's bin): options stand for environment variables, which cluster
  // workers inherit.
  const command = parseCommandLine(process.argv.slice(2));
  if (command.kind === 'help') return console.log(commandLineUsage);
  if (command.kind === 'version') return console.log(packageVersion());
  if (command.kind === 'check') {
    process.exitCode = await runConfigCheck(command.arguments, process.env, process.stdout);
    return;
  }
  Object.assign(process.env, command.environment);
  if (cluster.isWorker) {
    // First, before anything can wedge: the heartbeat the primary watches, and the thread that ends this worker
    // when the primary is gone (even killed with SIGKILL, even while this worker's main thread spins).
    startProcessWatchdog({ parentPid: process.ppid, role: 'worker' });
    // The IPC channel closes the moment the primary dies: exit then, before serving requests whose usage has nowhere
    // to go (the watchdog's 250 ms poll remains for a worker whose loop is too busy to see this event).
    process.once('disconnect', () => {
      if (cluster.worker?.exitedAfterDisconnect === true) return;
      // Written at once, not buffered: SIGKILL follows.
      console.error(
        jsonLogLine(Date.now(), 'error', 'the cluster primary is gone; this worker exits with it', {
          role: 'worker',
          pid: process.pid,
        }),
      );
      process.kill(process.pid, 'SIGKILL');
    });
  }
  const cpus = availableParallelism();
  const settings = readNodeServerSettings(process.env, cpus);
  // TORII_LOG_LEVEL: an invalid value stops the start here, with one line naming it.
  const logging = openNodeLogging(process.env);
  // Before any load: TORII_HEAP_GROWING_PERCENT, when set, bounds the old generation's growth (see heap-growth.ts).
  boundHeapGrowth();
  // And the young generation stays small, so no scavenge holds a request for long (see young-generation.ts).
  const semiSpaceMegabytes = semiSpaceCap(process.env, process.execArgv);
  if (semiSpaceMegabytes !== undefined) capYoungGeneration(semiSpaceMegabytes);
  // With a CPU or less per process, scavenges run on the main thread alone (see young-generation.ts).
  if (scavengesOnOneThread(process.env, process.execArgv, cpus, settings.workers)) {
    scavengeOnOneThread();
  }
  // TORII_DATABASE=off: a pure proxy with the master key only; no database, ledger, virtual keys or stored responses.
  const withDatabase = readDatabaseSetting(process.env) !== 'off';
  const clustered = settings.workers > 1;
  if (clustered && cluster.isPrimary) {
    await (withDatabase ? runPrimary(settings, logging) : runPrimaryWithoutDatabase(settings, logging));
    return;
  }
  await runServer(settings, cluster.isWorker, withDatabase, logging);
}

/** The cluster's workers alive now. */
const clusterWorkers = () => Object.values(cluster.workers ?? {}).filter((worker) => worker !== undefined);

/** What the primary prints once every worker listens: the address, the config's groups, a generated master key. */
function announcer(
  settings: NodeServerSettings,
  probe: { configSource: string; modelGroups: string[] },
  masterKey: { key: string; generated: boolean },
  logger: GatewayLogger,
): () => void {
  return () =>
    announceGateway(logger, {
      url: listeningUrl(settings.hostname, settings.port),
      configSource: probe.configSource,
      modelGroups: probe.modelGroups,
      generatedMasterKey: masterKey.generated ? masterKey.key : undefined,
      fields: { runtime: 'node', workers: settings.workers, database: readDatabaseSetting(process.env) },
    });
}

/** The cluster primary of `TORII_DATABASE=off`: forks and watches the workers, and owns nothing else. */
async function runPrimaryWithoutDatabase(settings: NodeServerSettings, logging: NodeLogging): Promise<void> {
  const masterKey = resolveMasterKey(process.env);
  const probe = await createNodeGateway(process.env, { masterKey: masterKey.key, logger: logging.logger });
  // Checked once here, so a bad OTEL_* setting stops the start with one line instead of crash-looping every worker.
  readTraceExportSettings(process.env);
  if (settings.eventLoopStallTimeoutMs > 0)
    startProcessWatchdog({ stallTimeoutMs: settings.eventLoopStallTimeoutMs, role: 'primary' });
  const circuits = createCircuitRelay(clusterWorkers);
  runClusterPrimary(
    settings,
    { TORII_MASTER_KEY: masterKey.key },
    announcer(settings, probe, masterKey, logging.logger),
    { logger: logging.logger, onFork: (worker) => circuits.attach(worker) },
  );
}

/**
 * The usage thread's program beside this file: `postgres-usage-thread-main.js` next to `dist/server.js` (its own
 * build entry), or the `.ts` source next to this one when run from source. Absent (a bundle of someone else's that
 * left it out): undefined, and the ledger is written on the request thread.
 */
function usageThreadFile(): URL | undefined {
  const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const file = new URL(`./postgres-usage-thread-main${extension}`, import.meta.url);
  return existsSync(file) ? file : undefined;
}

async function runPrimary(settings: NodeServerSettings, logging: NodeLogging): Promise<void> {
  const { logger } = logging;
  const masterKey = resolveMasterKey(process.env);
  // Validate the config once up front, so a bad config fails with one clear message instead of N crash loops.
  const probe = await createNodeGateway(process.env, { masterKey: masterKey.key, logger });
  readTraceExportSettings(process.env);
  // Redis too: a REDIS_URL that does not answer at start is reported once here, not by each worker in a loop.
  await checkRedisAtStart(process.env, logger);
  // The primary owns the database and the usage writer; workers reach them over IPC (node-data-plane.ts).
  const plane = await openClusterPrimaryDataPlane(process.env, logger, { usageThreadFile: usageThreadFile() });
  const registry = new Registry();
  registerProcessMetrics(registry);
  registerUsageQueueMetrics(registry, plane.usageQueue, { role: 'ledger', canPersist: plane.ledger.canPersist });
  const workers = clusterWorkers;
  const circuits = createCircuitRelay(workers);
  plane.setBroadcast((invalidation) => broadcastToWorkers(workers(), clusterInvalidationChannel, invalidation));
  // Workers answer /health/ready, so they hear whether the ledger can persist usage.
  plane.ledger.onChange((canPersist) => broadcastToWorkers(workers(), usageLedgerChannel, { canPersist }));
  if (settings.eventLoopStallTimeoutMs > 0)
    startProcessWatchdog({ stallTimeoutMs: settings.eventLoopStallTimeoutMs, role: 'primary' });
  runClusterPrimary(settings, { TORII_MASTER_KEY: masterKey.key }, announcer(settings, probe, masterKey, logger), {
    registry,
    logger,
    onFork: (worker) => {
      serveClusterRpc(worker, plane.handlers);
      circuits.attach(worker);
      worker.once('listening', () => {
        if (!plane.ledger.canPersist()) broadcastToWorkers([worker], usageLedgerChannel, { canPersist: false });
      });
    },
    beforeExit: () => plane.close({ timeoutMs: usageFlushTimeoutMs }),
    beforeExitTimeoutMs: usageFlushTimeoutMs + 5_000,
  });
}

/** Serves the app with the Node HTTP server: its direct routes, client limits and drain. */
async function serveOnNode(
  app: Parameters<typeof gatewayDirectRoutes>[0],
  settings: NodeServerSettings,
): Promise<ServedGateway> {
  const server = await startNodeHttpServer({
    fetch: app.fetch,
    directRoutes: gatewayDirectRoutes(app),
    port: settings.port,
    ...(settings.hostname ? { hostname: settings.hostname } : {}),
    shutdownGraceMs: settings.shutdownGraceMs,
    limits: {
      headersTimeoutMs: settings.headersTimeoutMs,
      requestTimeoutMs: settings.requestTimeoutMs,
      keepAliveTimeoutMs: settings.keepAliveTimeoutMs,
      maxConnections: settings.maxConnections,
    },
  });
  return {
    url: listeningUrl(settings.hostname, settings.port),
    isAccepting: () => server.isAccepting(),
    drain: async () => {
      const { unfinished } = await server.drain();
      return { complete: unfinished === 0, unfinished };
    },
  };
}

/** A single process, or one cluster worker: the server kit's lifecycle with Node's data plane and services. */
async function runServer(
  settings: NodeServerSettings,
  isClusterWorker: boolean,
  withDatabase: boolean,
  logging: NodeLogging,
): Promise<void> {
  const { logger } = logging;
  if (isClusterWorker) startWorkerHeartbeat(heartbeatIntervalMs(settings.workerHeartbeatTimeoutMs));
  const metrics = createPrometheusMetrics();
  await startGatewayProcess({
    runtime: 'node',
    environment: process.env,
    logger,
    accessLog: logging.accessLog,
    readTextFile: readNodeTextFile,
    serviceVersion: packageVersion(),
    // A cluster's workers leave the start-up line and the config's warnings to the primary.
    announces: !isClusterWorker,
    announcementFields: { workers: settings.workers, database: readDatabaseSetting(process.env) },
    async openAccounting(masterKey) {
      if (!withDatabase) return undefined;
      const plane = isClusterWorker
        ? await openClusterWorkerDataPlane(process.env, createClusterRpcClient(), logger)
        : await openSingleProcessDataPlane(process.env, logger, { usageThreadFile: usageThreadFile() });
      registerUsageQueueMetrics(
        metrics.registry,
        plane.usageQueue,
        isClusterWorker ? { role: 'forwarder' } : { role: 'ledger', canPersist: plane.canPersistUsage },
      );
      return nodeProcessAccounting(plane, masterKey, logger);
    },
    // A cluster worker without a database still shares circuit changes, through the primary.
    circuitBus: !withDatabase && isClusterWorker ? createClusterCircuitBus(createClusterRpcClient()) : undefined,
    services: () =>
      nodeProcessServices(metrics, isClusterWorker ? createWorkerMetricsExposition(metrics.registry) : undefined),
    serve: (app) => serveOnNode(app, settings),
    onStopSignal(listener) {
      process.on('SIGTERM', listener);
      process.on('SIGINT', listener);
    },
    exit: (code) => process.exit(code),
  });
  if (!isClusterWorker && settings.eventLoopStallTimeoutMs > 0)
    startProcessWatchdog({ stallTimeoutMs: settings.eventLoopStallTimeoutMs, role: 'single' });
}

/**
 * A start that fails prints ONE line naming the setting and the reason (startup-error.ts) and exits 1. A cluster
 * worker hands its line to the primary instead, which prints it once and stops, rather than forking in a loop.
 */
main().catch((error: unknown) => {
  const line = formatStartupFailure(error);
  if (cluster.isWorker && process.send !== undefined && process.connected) {
    const exit = setTimeout(() => process.exit(1), 2_000);
    process.send({ type: 'torii:startup-failed', line } satisfies WorkerStartupFailedMessage, undefined, {}, () => {
      clearTimeout(exit);
      process.exit(1);
    });
    return;
  }
  console.error(line);
  process.exit(1);
});
