import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { ConfigError } from '../../src/config/config-error.ts';
import { resolveMasterKey } from '../shared/resolve-master-key.ts';
import { consoleLogger } from '../../src/services.ts';
import { runClusterPrimary } from './cluster-primary.ts';
import { clusterInvalidationChannel } from './cluster-remote-services.ts';
import { broadcastToWorkers, createClusterRpcClient, serveClusterRpc } from './cluster-rpc.ts';
import { createWorkerMetricsExposition } from './cluster-metrics.ts';
import { readNodeServerSettings, type NodeServerSettings } from './node-environment.ts';
import {
  openClusterPrimaryDataPlane,
  openClusterWorkerDataPlane,
  openSingleProcessDataPlane,
  type NodeDataPlane,
} from './node-data-plane.ts';
import { createNodeGateway } from './node-gateway.ts';
import { startNodeHttpServer, type NodeHttpServer } from './node-http-server.ts';
import { createPrometheusMetrics } from './prometheus-metrics.ts';

/** How long shutdown may spend writing queued usage before the rest goes to the disk spill. */
const usageFlushTimeoutMs = 5_000;

/**
 * `node dist/server.js`: a cluster primary forking one worker per core (TORII_WORKERS overrides; 1 = a single
 * process, no cluster), each serving the gateway on PORT (default 8787).
 */
async function main(): Promise<void> {
  const settings = readNodeServerSettings(process.env, availableParallelism());
  const clustered = settings.workers > 1;
  if (clustered && cluster.isPrimary) {
    const masterKey = resolveMasterKey(process.env);
    // Validate the config once up front, so a bad config fails with one clear message instead of N crash loops.
    const probe = await createNodeGateway(process.env, { masterKey: masterKey.key });
    // The primary owns the database and the usage writer; workers reach them over IPC (node-data-plane.ts).
    const plane = await openClusterPrimaryDataPlane(process.env);
    plane.setBroadcast((invalidation) =>
      broadcastToWorkers(
        Object.values(cluster.workers ?? {}).filter((worker) => worker !== undefined),
        clusterInvalidationChannel,
        invalidation,
      ),
    );
    runClusterPrimary(
      settings,
      { TORII_MASTER_KEY: masterKey.key },
      () => announce(settings, probe.configSource, probe.modelGroups, masterKey.generated ? masterKey.key : undefined),
      {
        onFork: (worker) => serveClusterRpc(worker, plane.handlers),
        beforeExit: () => plane.close({ timeoutMs: usageFlushTimeoutMs }),
      },
    );
    return;
  }
  await runServer(settings, cluster.isWorker);
}

async function runServer(settings: NodeServerSettings, isClusterWorker: boolean): Promise<void> {
  const masterKey = resolveMasterKey(process.env);
  const running: { server?: NodeHttpServer } = {};
  const metrics = createPrometheusMetrics();
  const dataPlane: NodeDataPlane = isClusterWorker
    ? await openClusterWorkerDataPlane(process.env, createClusterRpcClient(), consoleLogger)
    : await openSingleProcessDataPlane(process.env, consoleLogger);
  const gateway = await createNodeGateway(process.env, {
    dataPlane,
    masterKey: masterKey.key,
    metrics,
    isReady: () => running.server?.isAccepting() ?? false,
    ...(isClusterWorker ? { metricsExposition: createWorkerMetricsExposition(metrics.registry) } : {}),
  });
  const server = await startNodeHttpServer({
    fetch: gateway.app.fetch,
    port: settings.port,
    ...(settings.hostname ? { hostname: settings.hostname } : {}),
    shutdownGraceMs: settings.shutdownGraceMs,
  });
  running.server = server;
  if (!isClusterWorker)
    announce(settings, gateway.configSource, gateway.modelGroups, masterKey.generated ? masterKey.key : undefined);
  let draining = false;
  const stop = async (): Promise<void> => {
    if (draining) return;
    draining = true;
    const { unfinished } = await server.drain();
    if (unfinished > 0)
      console.error(
        JSON.stringify({ level: 'warn', message: 'grace period over; closing unfinished requests', unfinished }),
      );
    // Usage of every finished request goes to the database (or the primary, or the disk spill) before exit.
    await dataPlane
      .close({ timeoutMs: usageFlushTimeoutMs })
      .catch((error: unknown) =>
        console.error(JSON.stringify({ level: 'error', message: 'usage flush failed', error: String(error) })),
      );
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

function announce(
  settings: NodeServerSettings,
  configSource: string,
  modelGroups: string[],
  generatedKey: string | undefined,
): void {
  const url = `http://${settings.hostname ?? 'localhost'}:${settings.port}`;
  console.log(
    JSON.stringify({
      level: 'info',
      message: `torii listening on ${url}`,
      workers: settings.workers,
      config: configSource,
      modelGroups,
      ...(generatedKey
        ? { masterKey: generatedKey, note: 'generated for this run; set TORII_MASTER_KEY to choose one' }
        : {}),
    }),
  );
  if (modelGroups.length === 0) {
    console.log(
      JSON.stringify({
        level: 'warn',
        message:
          'no model groups: set TORII_CONFIG to a config file, or a provider key such as OPENAI_API_KEY or ANTHROPIC_API_KEY',
      }),
    );
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(error.message);
  else console.error(error);
  process.exit(1);
});
