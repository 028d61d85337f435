import type { UsageQueue } from '../usage/usage-queue.ts';
import { createObservedFamily, type PrometheusFamily } from './prometheus-families.ts';

/**
 * A usage queue's counters as Prometheus families (`usageQueue.stats()`, read when scraped), so lost usage is never
 * silent:
 *
 * - `ledger` (the queue that writes the database: a single process, the cluster primary, a Deno server):
 *   `torii_usage_events_written_total`, `torii_usage_events_spilled_total`, `torii_usage_events_replayed_total`,
 *   `torii_usage_events_lost_total`, `torii_usage_write_failures_total`, `torii_usage_events_queued`, and with
 *   `canPersist` the gauge `torii_usage_ledger_can_persist` (1, or 0 while `/health/ready` answers 503 for it);
 * - `forwarder` (a cluster worker's queue to the primary): only `torii_usage_events_lost_total` and
 *   `torii_usage_events_queued`, which the cluster sums with the primary's (its "written" would count events twice).
 *
 * @example
 * const families = usageQueueFamilies(accounting.usageQueue, { role: 'ledger' });
 */
export function usageQueueFamilies(
  queue: Pick<UsageQueue, 'stats'>,
  options: { role: 'ledger' | 'forwarder'; canPersist?: () => boolean },
): PrometheusFamily[] {
  const counter = (name: string, help: string, read: () => number) =>
    createObservedFamily({ name, help, type: 'counter', read });
  const gauge = (name: string, help: string, read: () => number) =>
    createObservedFamily({ name, help, type: 'gauge', read });
  const families = [
    counter(
      'torii_usage_events_lost_total',
      'Usage events lost: neither the database nor the disk spill could take them (see the error log).',
      () => queue.stats().dropped,
    ),
    gauge('torii_usage_events_queued', 'Usage events in memory, waiting to be written.', () => queue.stats().queued),
  ];
  if (options.role === 'forwarder') return families;
  families.push(
    counter('torii_usage_events_written_total', 'Usage events written to the ledger.', () => queue.stats().written),
    counter(
      'torii_usage_events_spilled_total',
      'Usage events moved to the disk spill because the database could not take them in time.',
      () => queue.stats().spilled,
    ),
    counter(
      'torii_usage_events_replayed_total',
      'Usage events written to the ledger from the disk spill.',
      () => queue.stats().replayed,
    ),
    counter(
      'torii_usage_write_failures_total',
      'Failed or timed-out usage writes to the database (each is retried).',
      () => queue.stats().failedWrites,
    ),
  );
  const canPersist = options.canPersist;
  if (canPersist !== undefined)
    families.push(
      gauge(
        'torii_usage_ledger_can_persist',
        '1 while usage can be persisted (database or spill), 0 while it cannot (/health/ready answers 503).',
        () => (canPersist() ? 1 : 0),
      ),
    );
  return families;
}
