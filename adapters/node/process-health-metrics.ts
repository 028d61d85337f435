import type { Metric, Registry } from 'prom-client';
import type { UsageQueue } from '../../src/usage/usage-queue.ts';
import { createCounterFamily, createObservedFamily, type PrometheusFamily } from './prometheus-families.ts';

function register(registry: Registry, family: PrometheusFamily): void {
  // The families have the shape prom-client's Registry reads (name, help, type, aggregator, get).
  registry.registerMetric(family as unknown as Metric);
}

/**
 * Exports a usage queue's counters (`usageQueue.stats()`, read when scraped) so lost usage is never silent:
 *
 * - `ledger` (the queue that writes the database: a single process, the cluster primary):
 *   `torii_usage_events_written_total`, `torii_usage_events_spilled_total`, `torii_usage_events_replayed_total`,
 *   `torii_usage_events_lost_total`, `torii_usage_write_failures_total`, `torii_usage_events_queued`, and with
 *   `canPersist` the gauge `torii_usage_ledger_can_persist` (1, or 0 while `/health/ready` answers 503 for it);
 * - `forwarder` (a cluster worker's queue to the primary): only `torii_usage_events_lost_total` and
 *   `torii_usage_events_queued`, which the cluster sums with the primary's (its "written" would count events twice).
 *
 * @example
 * registerUsageQueueMetrics(metrics.registry, dataPlane.usageQueue, { role: 'ledger', canPersist: () => true });
 */
export function registerUsageQueueMetrics(
  registry: Registry,
  queue: Pick<UsageQueue, 'stats'>,
  options: { role: 'ledger' | 'forwarder'; canPersist?: () => boolean },
): void {
  const counter = (name: string, help: string, read: () => number) =>
    register(registry, createObservedFamily({ name, help, type: 'counter', read }));
  counter(
    'torii_usage_events_lost_total',
    'Usage events lost: neither the database nor the disk spill could take them (see the error log).',
    () => queue.stats().dropped,
  );
  register(
    registry,
    createObservedFamily({
      name: 'torii_usage_events_queued',
      help: 'Usage events in memory, waiting to be written.',
      type: 'gauge',
      read: () => queue.stats().queued,
    }),
  );
  if (options.role === 'forwarder') return;
  counter('torii_usage_events_written_total', 'Usage events written to the ledger.', () => queue.stats().written);
  counter(
    'torii_usage_events_spilled_total',
    'Usage events moved to the disk spill because the database could not take them in time.',
    () => queue.stats().spilled,
  );
  counter(
    'torii_usage_events_replayed_total',
    'Usage events written to the ledger from the disk spill.',
    () => queue.stats().replayed,
  );
  counter(
    'torii_usage_write_failures_total',
    'Failed or timed-out usage writes to the database (each is retried).',
    () => queue.stats().failedWrites,
  );
  const canPersist = options.canPersist;
  if (canPersist !== undefined) {
    register(
      registry,
      createObservedFamily({
        name: 'torii_usage_ledger_can_persist',
        help: '1 while usage can be persisted (database or spill), 0 while it cannot (/health/ready answers 503).',
        type: 'gauge',
        read: () => (canPersist() ? 1 : 0),
      }),
    );
  }
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
