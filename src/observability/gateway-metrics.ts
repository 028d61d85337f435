import type { AttemptObservation, CircuitObservation, GatewayMetrics } from '../services.ts';
import {
  createCounterFamily,
  createGaugeFamily,
  createHistogramFamily,
  createLabelledGaugeFamily,
  type CounterSeries,
  type HistogramSeries,
  type PrometheusFamily,
} from './prometheus-families.ts';
import type { RequestObservation } from './request-observation.ts';

const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const overheadBuckets = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];
/** The bucket bounds the OpenTelemetry GenAI conventions advise for `gen_ai.server.time_to_first_token`. */
const timeToFirstTokenBuckets = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** The gateway's metrics as Prometheus families, ready for any exposition (prom-client's Registry, or prometheus-text.ts). */
export interface GatewayPrometheusMetrics extends GatewayMetrics {
  /** Every family, in exposition order. */
  readonly families: readonly PrometheusFamily[];
}

/** Labels from optional values: a value the request does not have is left out, never a placeholder such as `none`. */
function labelsOf(entries: Record<string, string | undefined>): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [name, value] of Object.entries(entries)) if (value !== undefined) labels[name] = value;
  return labels;
}

/** The fields of a request's observation that pick its series (their labels). */
type SeriesLabel = 'modelGroup' | 'provider' | 'operation' | 'clientApi' | 'status' | 'stream';

interface RequestSeries {
  requests: CounterSeries;
  requestDuration: HistogramSeries;
  timeToFirstToken: HistogramSeries;
  upstreamDuration: HistogramSeries;
  overhead: HistogramSeries;
  inputTokens: CounterSeries;
  outputTokens: CounterSeries;
  cachedInputTokens: CounterSeries;
  reasoningTokens: CounterSeries;
  cost: CounterSeries;
}

/**
 * The gateway's metrics, recorded in memory on the request path (a label set is resolved to its series once; after
 * that a request only adds numbers) and exposed as Prometheus families. Names follow Prometheus conventions (base
 * units, `_seconds`, `_total` on counters) and map to the OpenTelemetry GenAI semantic conventions:
 *
 * | Prometheus                                              | OpenTelemetry                                  |
 * | ------------------------------------------------------- | ---------------------------------------------- |
 * | `torii_request_duration_seconds` (histogram)            | `gen_ai.server.request.duration` (s)           |
 * | `torii_time_to_first_token_seconds` (histogram, streams) | `gen_ai.server.time_to_first_token` (s)        |
 * | `torii_tokens_total{type="input"\|"output"}`            | `gen_ai.client.token.usage` `_sum`, by `gen_ai.token.type` |
 * | `torii_tokens_total{type="cached_input"\|"reasoning"}`  | no GenAI type yet: parts of input and output   |
 * | `torii_requests_total{status_code}`                     | `http.server.request.duration` `_count`, by `http.response.status_code` |
 * | `torii_cost_usd_total`                                  | none (the conventions have no cost)            |
 *
 * Labels map too: `operation` to `gen_ai.operation.name` (`chat`, `embeddings`), `model_group` to
 * `gen_ai.request.model` (the name the client asked for), `provider` to `gen_ai.provider.name` (the config's provider
 * name), `client_api` to none. `gen_ai.client.token.usage` is a per-request histogram in OpenTelemetry; here tokens are
 * a counter (what dashboards sum), equal to that histogram's sum. Tokens and cost are the request's accounted ones
 * (the provider's, or the ledger's estimate when it reported none; see `usageSource` in the access line).
 *
 * Cardinality is bounded: model groups, providers and deployments come from the config, operations and client APIs
 * are the gateway's own, status codes are the few the gateway answers; no key, user or client-sent value is a label.
 * A request that failed before routing has no `model_group` or `provider` label (left out, not `none`).
 *
 * @example
 * const metrics = createGatewayPrometheusMetrics();
 * const gateway = createGateway({ ..., services: { metrics } });
 * const text = renderPrometheusText(metrics.families);
 */
export function createGatewayPrometheusMetrics(): GatewayPrometheusMetrics {
  const requests = createCounterFamily({
    name: 'torii_requests_total',
    help: 'Requests served, by operation, client API, model group, provider and HTTP status code.',
  });
  const requestDuration = createHistogramFamily({
    name: 'torii_request_duration_seconds',
    help: 'Whole request time as the gateway saw it (streams: until the last byte). OpenTelemetry: gen_ai.server.request.duration.',
    buckets: latencyBuckets,
  });
  const timeToFirstToken = createHistogramFamily({
    name: 'torii_time_to_first_token_seconds',
    help: 'Streams: time from the request to the first output sent to the client. OpenTelemetry: gen_ai.server.time_to_first_token.',
    buckets: timeToFirstTokenBuckets,
  });
  const upstreamDuration = createHistogramFamily({
    name: 'torii_upstream_duration_seconds',
    help: 'Time waiting for the upstream (headers, and the body of non-streamed responses).',
    buckets: latencyBuckets,
  });
  const overhead = createHistogramFamily({
    name: 'torii_overhead_seconds',
    help: 'Time spent inside the gateway, upstream time excluded (not recorded where the runtime cannot measure it).',
    buckets: overheadBuckets,
  });
  const tokens = createCounterFamily({
    name: 'torii_tokens_total',
    help: 'Tokens by type: input (cached included), output (reasoning included), cached_input, reasoning. OpenTelemetry: gen_ai.client.token.usage.',
  });
  const cost = createCounterFamily({
    name: 'torii_cost_usd_total',
    help: "Cost of the requests' usage at the deployments' prices, US dollars.",
  });
  const inFlight = createGaugeFamily({ name: 'torii_requests_in_flight', help: 'Requests being served now.' });
  const attempts = createCounterFamily({
    name: 'torii_upstream_attempts_total',
    help: 'Upstream attempts, by model group, deployment and outcome (success, failure, other).',
  });
  const retries = createCounterFamily({
    name: 'torii_retries_total',
    help: 'Attempts after the first of their request, by the model group they were made on.',
  });
  const fallbacks = createCounterFamily({
    name: 'torii_fallbacks_total',
    help: 'Attempts made on a fallback group, by that group.',
  });
  const circuitTransitions = createCounterFamily({
    name: 'torii_circuit_transitions_total',
    help: "Deployments' circuits opening (cooling down) and closing again, by deployment and new state.",
  });
  const circuitOpen = createLabelledGaugeFamily({
    name: 'torii_deployment_circuit_open',
    help: 'Processes in which the deployment is cooling down or probing (its circuit not closed).',
  });

  const series = new Map<string, RequestSeries>();
  /** The labels and series of the last request: a run of requests alike (the usual case) builds no key at all. */
  let last: (Pick<RequestObservation, SeriesLabel> & { found: RequestSeries }) | undefined;
  const seriesFor = (observation: RequestObservation): RequestSeries => {
    const { modelGroup, provider, operation, clientApi, status, stream } = observation;
    if (
      last !== undefined &&
      last.modelGroup === modelGroup &&
      last.provider === provider &&
      last.operation === operation &&
      last.clientApi === clientApi &&
      last.status === status &&
      last.stream === stream
    )
      return last.found;
    const key = `${modelGroup}\u0000${provider}\u0000${operation}\u0000${clientApi}\u0000${status}\u0000${stream}`;
    let found = series.get(key);
    if (found === undefined) {
      const model_group = modelGroup;
      const byModel = labelsOf({ model_group, provider });
      const tokensOf = (type: string) => tokens.series({ ...byModel, type });
      found = {
        requests: requests.series(
          labelsOf({ operation, client_api: clientApi, model_group, provider, status_code: String(status) }),
        ),
        requestDuration: requestDuration.series(labelsOf({ operation, model_group, stream: String(stream) })),
        timeToFirstToken: timeToFirstToken.series(byModel),
        upstreamDuration: upstreamDuration.series(labelsOf({ provider })),
        overhead: overhead.series({ operation }),
        inputTokens: tokensOf('input'),
        outputTokens: tokensOf('output'),
        cachedInputTokens: tokensOf('cached_input'),
        reasoningTokens: tokensOf('reasoning'),
        cost: cost.series(byModel),
      };
      series.set(key, found);
    }
    last = { modelGroup, provider, operation, clientApi, status, stream, found };
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
    families: [
      requests,
      requestDuration,
      timeToFirstToken,
      upstreamDuration,
      overhead,
      tokens,
      cost,
      inFlight,
      attempts,
      retries,
      fallbacks,
      circuitTransitions,
      circuitOpen,
    ],
    requestStarted() {
      inFlight.inc();
    },
    requestFinished(observation) {
      inFlight.dec();
      const observed = seriesFor(observation);
      observed.requests.inc();
      observed.requestDuration.observe(observation.durationMs / 1000);
      if (observation.timeToFirstTokenMs !== undefined)
        observed.timeToFirstToken.observe(observation.timeToFirstTokenMs / 1000);
      if (observation.upstreamMs !== undefined) observed.upstreamDuration.observe(observation.upstreamMs / 1000);
      if (observation.overheadMs !== undefined) observed.overhead.observe(observation.overheadMs / 1000);
      if (observation.inputTokens > 0) observed.inputTokens.inc(observation.inputTokens);
      if (observation.outputTokens > 0) observed.outputTokens.inc(observation.outputTokens);
      if (observation.cachedInputTokens > 0) observed.cachedInputTokens.inc(observation.cachedInputTokens);
      if (observation.reasoningTokens > 0) observed.reasoningTokens.inc(observation.reasoningTokens);
      if (observation.costUsd > 0) observed.cost.inc(observation.costUsd);
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
