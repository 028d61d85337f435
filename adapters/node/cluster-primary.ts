import cluster, { type Worker } from 'node:cluster';
import { Registry } from 'prom-client';
import { createClusterMetricsCollector } from './cluster-metrics.ts';
import { createWorkerWatch } from './cluster-worker-watch.ts';
import type { NodeServerSettings } from './node-environment.ts';
import { registerWorkerHealthMetrics } from './process-health-metrics.ts';
import { consoleLogger, type GatewayLogger } from '../../src/services.ts';

/** What the primary does besides forking: serve each worker (RPC), and close its own resources before exiting. */
export interface ClusterPrimaryHooks {
  onFork?: (worker: Worker) => void;
  beforeExit?: () => Promise<void>;
  /** The primary's own metrics (merged into the cluster's `/metrics`); the worker health counters are added to it. */
  registry?: Registry;
  /** The primary's logger (default: the console at `info`). */
  logger?: GatewayLogger;
  /** How long `beforeExit` may take before the primary exits anyway, ms (default 10,000). */
  beforeExitTimeoutMs?: number;
}

/** How long a worker may spend flushing its usage after its grace period (server.ts), plus a margin, ms. */
export const workerFlushAllowanceMs = 7_000;

/** The message a cluster worker sends (instead of printing) when it cannot start; the primary prints it once. */
export interface WorkerStartupFailedMessage {
  type: 'torii:startup-failed';
  /** The one log line describing the failure (startup-error.ts). */
  line: string;
}

function isStartupFailed(message: unknown): message is WorkerStartupFailedMessage {
  const typed = message as Partial<WorkerStartupFailedMessage> | null;
  return typed?.type === 'torii:startup-failed' && typeof typed.line === 'string';
}

/** The workers whose process has not exited yet (an exited one stays in `cluster.workers` until its IPC closes). */
function liveWorkers(): Worker[] {
  return Object.values(cluster.workers ?? {}).filter(
    (worker): worker is Worker => worker !== undefined && !worker.isDead(),
  );
}

/**
 * The cluster primary: forks one worker per configured core, watches and replaces them, aggregates their metrics, and
 * on SIGTERM/SIGINT asks every worker to drain, then exits once all have exited. Workers share the listening port
 * through the cluster module (round-robin on Linux).
 *
 * - **Wedged workers**: each worker's event loop sends a heartbeat over IPC (cluster-worker-watch.ts). A worker
 *   silent for `workerHeartbeatTimeoutMs` after it started listening, or not listening `workerStartTimeoutMs` after
 *   its fork, is logged at error level, killed with SIGKILL and replaced (`torii_worker_heartbeat_misses_total`,
 *   `torii_worker_restarts_total`).
 * - **Crash loops**: more than 3 x workers unexpected exits within 10 s and the primary gives up (exit 1).
 * - **Start-up failures**: a worker that cannot start (a busy PORT, Redis down ...) sends its one-line reason instead
 *   of printing it. Before any worker has listened, the primary prints it once, stops every worker and exits 1:
 *   no fork loop. Later (a replacement) it is printed and the crash-loop guard applies.
 * - **No worker outlives the primary**: after SIGTERM, workers still alive `shutdownGraceMs + 7 s` later are killed
 *   with SIGKILL before the primary exits (exit code 1); on any exit of the primary (an uncaught exception included)
 *   its `exit` handler SIGKILLs what is left; a primary killed by SIGKILL, which runs no code, is noticed by each
 *   worker's own watchdog thread (process-watchdog.ts).
 */
export function runClusterPrimary(
  settings: NodeServerSettings,
  workerEnvironment: Record<string, string>,
  announce: () => void,
  hooks: ClusterPrimaryHooks = {},
): void {
  const logger = hooks.logger ?? consoleLogger;
  const log = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>): void =>
    logger[level](message, fields);
  const registry = hooks.registry ?? new Registry();
  const health = registerWorkerHealthMetrics(registry);
  const metrics = createClusterMetricsCollector(registry);
  let stopping = false;
  let exitCode = 0;
  let finishing = false;
  let everListening = false;
  let listening = 0;
  const recentCrashes: number[] = [];
  const killedForMiss = new Map<number, 'heartbeat' | 'start'>();

  process.on('exit', () => {
    // Whatever ends the primary (an uncaught exception included), no worker may outlive it.
    for (const worker of liveWorkers()) {
      if (worker.process.pid === undefined) continue;
      try {
        process.kill(worker.process.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });

  const finish = (): void => {
    if (finishing) return;
    finishing = true;
    watch.stop();
    // What the primary owns (the usage writer, the database) is closed after the last worker has handed over.
    const deadline = setTimeout(() => {
      log('error', 'closing the primary took too long; exiting anyway');
      process.exit(exitCode || 1);
    }, hooks.beforeExitTimeoutMs ?? 10_000);
    void (hooks.beforeExit?.() ?? Promise.resolve())
      .catch((error: unknown) => log('error', 'shutdown failed', { error: String(error) }))
      .finally(() => {
        clearTimeout(deadline);
        process.exit(exitCode);
      });
  };

  /** Stops every worker at once (a fatal start-up failure, a crash loop) and exits with `code`. */
  const abandon = (code: number): void => {
    stopping = true;
    exitCode = code;
    const workers = liveWorkers();
    for (const worker of workers) worker.process.kill('SIGKILL');
    // Each exit comes back through the cluster's 'exit' event, which finishes after the last one.
    if (workers.length === 0) finish();
  };

  const watch = createWorkerWatch({
    heartbeatTimeoutMs: settings.workerHeartbeatTimeoutMs,
    startTimeoutMs: settings.workerStartTimeoutMs,
    onMiss(worker, kind, silentMs) {
      health.missedHeartbeat(kind === 'heartbeat' ? 'running' : 'start');
      killedForMiss.set(worker.id, kind);
      log(
        'error',
        kind === 'heartbeat'
          ? 'worker event loop stopped turning (no heartbeat); killing it'
          : 'worker did not start listening in time; killing it',
        {
          pid: worker.process.pid,
          silentMs: Math.round(silentMs),
          boundMs: kind === 'heartbeat' ? settings.workerHeartbeatTimeoutMs : settings.workerStartTimeoutMs,
        },
      );
      worker.process.kill('SIGKILL');
    },
  });

  const fork = (): Worker => {
    const worker = cluster.fork(workerEnvironment);
    metrics.serve(worker);
    watch.watch(worker);
    hooks.onFork?.(worker);
    worker.on('message', (message: unknown) => {
      if (!isStartupFailed(message)) return;
      if (!everListening && !stopping) {
        // The first start fails for all of them alike (a busy port, Redis down): say it once and stop.
        console.error(message.line);
        abandon(1);
      } else if (!stopping) {
        console.error(message.line);
      }
    });
    worker.once('listening', () => {
      everListening = true;
      listening++;
      if (listening === settings.workers) announce();
    });
    return worker;
  };

  cluster.on('exit', (worker, code, signal) => {
    const missed = killedForMiss.get(worker.id);
    killedForMiss.delete(worker.id);
    if (stopping) {
      if (liveWorkers().length === 0) finish();
      return;
    }
    const now = Date.now();
    recentCrashes.push(now);
    while (recentCrashes.length > 0 && (recentCrashes[0] as number) < now - 10_000) recentCrashes.shift();
    log('error', 'worker exited unexpectedly; starting a new one', {
      pid: worker.process.pid,
      code,
      signal,
      ...(missed === undefined ? {} : { reason: missed === 'heartbeat' ? 'heartbeat missed' : 'start timed out' }),
    });
    if (recentCrashes.length > settings.workers * 3) {
      log('error', 'workers keep crashing; giving up');
      abandon(1);
      return;
    }
    health.restarted();
    fork();
  });

  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    const workers = liveWorkers();
    if (workers.length === 0) {
      finish();
      return;
    }
    for (const worker of workers) worker.process.kill('SIGTERM');
    const boundMs = settings.shutdownGraceMs + workerFlushAllowanceMs;
    setTimeout(() => {
      const left = liveWorkers();
      if (left.length === 0) return;
      log('error', 'workers did not exit within the shutdown bound; killing them', {
        pids: left.map((worker) => worker.process.pid),
        boundMs,
      });
      for (const worker of left) worker.process.kill('SIGKILL');
      exitCode = 1;
      finish();
    }, boundMs);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  for (let index = 0; index < settings.workers; index++) fork();
}
