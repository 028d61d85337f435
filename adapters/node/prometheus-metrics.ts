import { collectDefaultMetrics, Registry, type Metric } from 'prom-client';
import {
  createGatewayPrometheusMetrics,
  type GatewayPrometheusMetrics,
} from '../../src/observability/gateway-metrics.ts';

/** The metrics of one process, and the prom-client registry they are exposed through. */
export interface PrometheusMetrics extends GatewayPrometheusMetrics {
  registry: Registry;
}

/**
 * Adds prom-client's default process metrics to a registry: CPU (`process_cpu_seconds_total`), memory
 * (`process_resident_memory_bytes`, `nodejs_heap_size_used_bytes` ...), open handles, event-loop lag, GC time,
 * `process_start_time_seconds`. In a cluster every worker and the primary register them, and the primary's aggregation
 * sums them (memory and CPU of the whole host's gateway), averages the event-loop lag, and keeps one start time,
 * as prom-client's own aggregators say.
 *
 * @example
 * registerProcessMetrics(primaryRegistry);
 */
export function registerProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
}

/**
 * The gateway's metrics (src/observability/gateway-metrics.ts: names, labels and their OpenTelemetry GenAI mapping)
 * registered in a prom-client Registry, with the process metrics beside them. The families have the shape prom-client
 * reads, so the exposition, `getMetricsAsJSON()` and the cluster's AggregatorRegistry work unchanged; prom-client
 * builds the text only when `/metrics` is scraped. In cluster mode the primary aggregates these registries.
 *
 * @example
 * const metrics = createPrometheusMetrics();
 * const gateway = createGateway({ ..., services: { metrics } });
 * const text = await metrics.registry.metrics();
 */
export function createPrometheusMetrics(options: { processMetrics?: boolean } = {}): PrometheusMetrics {
  const registry = new Registry();
  const metrics = createGatewayPrometheusMetrics();
  // The families have the shape prom-client's Registry reads (name, help, type, aggregator, get).
  for (const family of metrics.families) registry.registerMetric(family as unknown as Metric);
  if (options.processMetrics !== false) registerProcessMetrics(registry);
  return Object.assign(metrics, { registry });
}
