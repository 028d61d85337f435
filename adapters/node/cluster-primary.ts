import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import { serveClusterMetrics } from './cluster-metrics.ts';
import type { NodeServerSettings } from './node-environment.ts';

/** What the primary does besides forking: serve each worker (RPC), and close its own resources before exiting. */
export interface ClusterPrimaryHooks {
  onFork?: (worker: Worker) => void;
  beforeExit?: () => Promise<void>;
}

/**
 * The cluster primary: forks one worker per configured core, replaces workers that die unexpectedly, aggregates
 * their metrics, and on SIGTERM/SIGINT asks every worker to drain, then exits 0 once all have exited.
 * Workers share the listening port through the cluster module (round-robin on Linux).
 */
export function runClusterPrimary(
  settings: NodeServerSettings,
  workerEnvironment: Record<string, string>,
  announce: () => void,
  hooks: ClusterPrimaryHooks = {},
): void {
  const exit = (code: number): void => {
    // What the primary owns (the usage writer, the database) is closed after the last worker has handed over.
    void (hooks.beforeExit?.() ?? Promise.resolve())
      .catch((error: unknown) =>
        console.error(JSON.stringify({ level: 'error', message: 'shutdown failed', error: String(error) })),
      )
      .finally(() => process.exit(code));
  };
  const aggregator = new AggregatorRegistry();
  let stopping = false;
  let listening = 0;
  const recentCrashes: number[] = [];

  const fork = (): Worker => {
    const worker = cluster.fork(workerEnvironment);
    serveClusterMetrics(worker, aggregator);
    hooks.onFork?.(worker);
    worker.once('listening', () => {
      listening++;
      if (listening === settings.workers) announce();
    });
    return worker;
  };

  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) exit(0);
      return;
    }
    const now = Date.now();
    recentCrashes.push(now);
    while (recentCrashes.length > 0 && (recentCrashes[0] as number) < now - 10_000) recentCrashes.shift();
    console.error(
      JSON.stringify({
        level: 'error',
        message: 'worker exited unexpectedly; starting a new one',
        pid: worker.process.pid,
        code,
        signal,
      }),
    );
    if (recentCrashes.length > settings.workers * 3) {
      console.error(JSON.stringify({ level: 'error', message: 'workers keep crashing; giving up' }));
      process.exit(1);
    }
    fork();
  });

  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined);
    if (workers.length === 0) exit(0);
    for (const worker of workers) worker.process.kill('SIGTERM');
    setTimeout(() => {
      console.error(
        JSON.stringify({ level: 'warn', message: 'workers did not exit within the grace period; forcing exit' }),
      );
      exit(0);
    }, settings.shutdownGraceMs + 5_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  for (let index = 0; index < settings.workers; index++) fork();
}
