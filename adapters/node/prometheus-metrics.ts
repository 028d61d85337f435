import { Registry, type Metric } from 'prom-client';
import type { AttemptObservation, CircuitObservation, GatewayMetrics, RequestObservation } from '../../src/services.ts';
import {
  createCounterFamily,
  createGaugeFamily,
  createLabelledGaugeFamily,
  createHistogramFamily,
  type CounterSeries,
  type HistogramSeries,
  type PrometheusFamily,
} from './prometheus-families.ts';

const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const overheadBuckets = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];

/** The metrics of one process, and the prom-client registry they are exposed through. */
export interface PrometheusMetrics extends GatewayMetrics {
  registry: Registry;
}

function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

/**
 * GatewayMetrics exposed through prom-client. A request's observation only adds numbers to series resolved once
 * per label combination (see prometheus-families.ts); prom-client builds the exposition when `/metrics` is scraped.
 * Labels are bounded (model groups and providers come from the config; no key or user ids). In cluster mode the
 * primary aggregates these registries.
 *
 * @example
 * const metrics = createPrometheusMetrics();
 * const gateway = createGateway({ ..., services: { metrics } });
 * const text = await metrics.registry.metrics();
 */
export function createPrometheusMetrics(): PrometheusMetrics {
  const registry = new Registry();
  const register = <Family extends PrometheusFamily>(family: Family): Family => {
    // The families have the shape prom-client's Registry reads (name, help, type, aggregator, get).
    registry.registerMetric(family as unknown as Metric);
    return family;
  };
  const requests = register(
    createCounterFamily({
      name: 'torii_requests_total',
      help: 'Requests served, by model group, provider, operation and status class.',
    }),
  );
  const requestDuration = register(
    createHistogramFamily({
      name: 'torii_request_duration_seconds',
      help: 'Whole request time as the gateway saw it (streams: until the last byte).',
      buckets: latencyBuckets,
    }),
  );
  const upstreamDuration = register(
    createHistogramFamily({
      name: 'torii_upstream_duration_seconds',
      help: 'Time waiting for the upstream (headers, and the body of non-streamed responses).',
      buckets: latencyBuckets,
    }),
  );
  const overhead = register(
    createHistogramFamily({
      name: 'torii_overhead_seconds',
      help: 'Time spent inside the gateway, upstream time excluded.',
      buckets: overheadBuckets,
    }),
  );
  const tokens = register(
    createCounterFamily({
      name: 'torii_tokens_total',
      help: 'Tokens reported by upstreams, by direction (input, output).',
    }),
  );
  const inFlight = register(
    createGaugeFamily({ name: 'torii_requests_in_flight', help: 'Requests being served now.' }),
  );
  const attempts = register(
    createCounterFamily({
      name: 'torii_upstream_attempts_total',
      help: 'Upstream attempts, by model group, deployment and outcome (success, failure, other).',
    }),
  );
  const retries = register(
    createCounterFamily({
      name: 'torii_retries_total',
      help: 'Attempts after the first of their request, by the model group they were made on.',
    }),
  );
  const fallbacks = register(
    createCounterFamily({
      name: 'torii_fallbacks_total',
      help: 'Attempts made on a fallback group, by that group.',
    }),
  );
  const circuitTransitions = register(
    createCounterFamily({
      name: 'torii_circuit_transitions_total',
      help: "Deployments' circuits opening (cooling down) and closing again, by deployment and new state.",
    }),
  );
  const circuitOpen = register(
    createLabelledGaugeFamily({
      name: 'torii_deployment_circuit_open',
      help: 'Processes in which the deployment is cooling down or probing (its circuit not closed).',
    }),
  );

  interface RequestSeries {
    requests: CounterSeries;
    requestDuration: HistogramSeries;
    upstreamDuration: HistogramSeries;
    overhead: HistogramSeries;
    inputTokens: CounterSeries;
    outputTokens: CounterSeries;
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
        requests: requests.series({
          model_group: modelGroup,
          provider,
          operation: observation.operation,
          status_class: statusClassLabel,
        }),
        requestDuration: requestDuration.series({
          model_group: modelGroup,
          operation: observation.operation,
          stream: String(observation.stream),
        }),
        upstreamDuration: upstreamDuration.series({ provider }),
        overhead: overhead.series({ operation: observation.operation }),
        inputTokens: tokens.series({ model_group: modelGroup, provider, direction: 'input' }),
        outputTokens: tokens.series({ model_group: modelGroup, provider, direction: 'output' }),
      };
      series.set(key, found);
    }
    return found;
  };

  /** The attempt series of one deployment, resolved on its first attempt (deployments come from the config). */
  const attemptSeries = new Map<
    string,
    Record<AttemptObservation['outcome'] | 'retries' | 'fallbacks', CounterSeries>
  >();
  const attemptSeriesFor = (observation: AttemptObservation) => {
    let found = attemptSeries.get(observation.deployment);
    if (found === undefined) {
      const { modelGroup: model_group, deployment } = observation;
      found = {
        success: attempts.series({ model_group, deployment, outcome: 'success' }),
        failure: attempts.series({ model_group, deployment, outcome: 'failure' }),
        other: attempts.series({ model_group, deployment, outcome: 'other' }),
        retries: retries.series({ model_group }),
        fallbacks: fallbacks.series({ model_group }),
      };
      attemptSeries.set(deployment, found);
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
    attemptFinished(observation: AttemptObservation) {
      const observed = attemptSeriesFor(observation);
      observed[observation.outcome].inc();
      if (observation.attempt > 1) observed.retries.inc();
      if (observation.fallback) observed.fallbacks.inc();
    },
    circuitChanged(observation: CircuitObservation) {
      // Transitions are counted where they happen (summed over processes they would count once per process).
      if (observation.source === 'local')
        circuitTransitions.series({ deployment: observation.deployment, state: observation.state }).inc();
      circuitOpen.set({ deployment: observation.deployment }, observation.state === 'open' ? 1 : 0);
    },
  };
}
