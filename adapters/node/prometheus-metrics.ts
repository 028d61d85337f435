import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { GatewayMetrics, RequestObservation } from '../../src/services.ts';

const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const overheadBuckets = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];

/** The prom-client metrics of one process, and the registry they live in. */
export interface PrometheusMetrics extends GatewayMetrics {
  registry: Registry;
}

function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

/**
 * GatewayMetrics backed by prom-client. Every call is an in-memory update; labels are bounded (model groups and
 * providers come from the config; no key or user ids). In cluster mode the primary aggregates these registries.
 *
 * @example
 * const metrics = createPrometheusMetrics();
 * const gateway = createGateway({ ..., services: { metrics } });
 * const text = await metrics.registry.metrics();
 */
export function createPrometheusMetrics(): PrometheusMetrics {
  const registry = new Registry();
  const requests = new Counter({
    name: 'torii_requests_total',
    help: 'Requests served, by model group, provider, operation and status class.',
    labelNames: ['model_group', 'provider', 'operation', 'status_class'] as const,
    registers: [registry],
  });
  const requestDuration = new Histogram({
    name: 'torii_request_duration_seconds',
    help: 'Whole request time as the gateway saw it (streams: until the last byte).',
    labelNames: ['model_group', 'operation', 'stream'] as const,
    buckets: latencyBuckets,
    registers: [registry],
  });
  const upstreamDuration = new Histogram({
    name: 'torii_upstream_duration_seconds',
    help: 'Time waiting for the upstream (headers, and the body of non-streamed responses).',
    labelNames: ['provider'] as const,
    buckets: latencyBuckets,
    registers: [registry],
  });
  const overhead = new Histogram({
    name: 'torii_overhead_seconds',
    help: 'Time spent inside the gateway, upstream time excluded.',
    labelNames: ['operation'] as const,
    buckets: overheadBuckets,
    registers: [registry],
  });
  const tokens = new Counter({
    name: 'torii_tokens_total',
    help: 'Tokens reported by upstreams, by direction (input, output).',
    labelNames: ['model_group', 'provider', 'direction'] as const,
    registers: [registry],
  });
  const inFlight = new Gauge({
    name: 'torii_requests_in_flight',
    help: 'Requests being served now.',
    registers: [registry],
  });

  // Label children are looked up once per label combination (bounded by the config) instead of hashing label
  // objects on every request.
  interface RequestSeries {
    requests: ReturnType<typeof requests.labels>;
    requestDuration: ReturnType<typeof requestDuration.labels>;
    upstreamDuration: ReturnType<typeof upstreamDuration.labels>;
    overhead: ReturnType<typeof overhead.labels>;
    inputTokens: ReturnType<typeof tokens.labels>;
    outputTokens: ReturnType<typeof tokens.labels>;
  }
  const series = new Map<string, RequestSeries>();
  const seriesFor = (observation: RequestObservation): RequestSeries => {
    const modelGroup = observation.modelGroup ?? 'none';
    const provider = observation.provider ?? 'none';
    const statusClassLabel = statusClass(observation.status);
    const key = `${modelGroup}\u0000${provider}\u0000${observation.operation}\u0000${statusClassLabel}\u0000${observation.stream}`;
    let found = series.get(key);
    if (found === undefined) {
      found = {
        requests: requests.labels({
          model_group: modelGroup,
          provider,
          operation: observation.operation,
          status_class: statusClassLabel,
        }),
        requestDuration: requestDuration.labels({
          model_group: modelGroup,
          operation: observation.operation,
          stream: String(observation.stream),
        }),
        upstreamDuration: upstreamDuration.labels({ provider }),
        overhead: overhead.labels({ operation: observation.operation }),
        inputTokens: tokens.labels({ model_group: modelGroup, provider, direction: 'input' }),
        outputTokens: tokens.labels({ model_group: modelGroup, provider, direction: 'output' }),
      };
      series.set(key, found);
    }
    return found;
  };

  return {
    registry,
    requestStarted() {
      inFlight.inc();
    },
    requestFinished(observation: RequestObservation) {
      inFlight.dec();
      const observed = seriesFor(observation);
      observed.requests.inc();
      observed.requestDuration.observe(observation.durationMs / 1000);
      if (observation.upstreamMs !== undefined) observed.upstreamDuration.observe(observation.upstreamMs / 1000);
      observed.overhead.observe(observation.overheadMs / 1000);
      if (observation.inputTokens) observed.inputTokens.inc(observation.inputTokens);
      if (observation.outputTokens) observed.outputTokens.inc(observation.outputTokens);
    },
  };
}
