import type { Metric, Registry } from 'prom-client';
import type { UsageQueue } from '../../src/usage/usage-queue.ts';
import { createCounterFamily, type PrometheusFamily } from '../../src/observability/prometheus-families.ts';
import { usageQueueFamilies } from '../../src/observability/usage-queue-metrics.ts';

function register(registry: Registry, family: PrometheusFamily): void {
  // The families have the shape prom-client's Registry reads (name, help, type, aggregator, get).
  registry.registerMetric(family as unknown as Metric);
}

/**
 * Registers a usage queue's counters (src/observability/usage-queue-metrics.ts) in a prom-client registry.
 *
 * @example
 * registerUsageQueueMetrics(metrics.registry, dataPlane.usageQueue, { role: 'ledger', canPersist: () => true });
 */
export function registerUsageQueueMetrics(
  registry: Registry,
  queue: Pick<UsageQueue, 'stats'>,
  options: { role: 'ledger' | 'forwarder'; canPersist?: () => boolean },
): void {
  for (const family of usageQueueFamilies(queue, options)) register(registry, family);
}

/** The cluster primary's counters of its workers' health. */
export interface WorkerHealthMetrics {
  /** A worker was forked to replace one that died or was killed. */
  restarted(): void;
  /** A worker missed its heartbeat bound (`running`) or did not start listening in time (`start`). */
  missedHeartbeat(phase: 'running' | 'start'): void;
}

/**
 * Registers `torii_worker_restarts_total` and `torii_worker_heartbeat_misses_total{phase}` in the primary's registry
 * (merged into the cluster's `/metrics`).
 *
 * @example
 * const health = registerWorkerHealthMetrics(primaryRegistry);
 * health.missedHeartbeat('running');
 */
export function registerWorkerHealthMetrics(registry: Registry): WorkerHealthMetrics {
  const restarts = createCounterFamily({
    name: 'torii_worker_restarts_total',
    help: 'Cluster workers started to replace one that exited or was killed.',
  });
  const misses = createCounterFamily({
    name: 'torii_worker_heartbeat_misses_total',
    help: 'Cluster workers killed because their event loop stopped turning (phase="running") or they did not start listening in time (phase="start").',
  });
  register(registry, restarts);
  register(registry, misses);
  const restartSeries = restarts.series({});
  const missSeries = { running: misses.series({ phase: 'running' }), start: misses.series({ phase: 'start' }) };
  return {
    restarted: () => restartSeries.inc(),
    missedHeartbeat: (phase) => missSeries[phase].inc(),
  };
}
