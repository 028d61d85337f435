import type { GatewayLogger } from './gateway-logger.ts';
import { otlpSpanOf, type OtlpSpan } from './otlp-span.ts';
import type { RequestObservation } from './request-observation.ts';
import { randomHex } from './trace-context.ts';
import type { TraceSampler } from './trace-sampler.ts';

/** Options of {@link createOtlpTraceExporter}. */
export interface OtlpTraceExporterOptions {
  /** The collector's traces URL (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`). */
  endpoint: string;
  /** Sent with every export (`OTEL_EXPORTER_OTLP_HEADERS`: an API key, say); never logged. */
  headers?: Readonly<Record<string, string>>;
  /** The resource's `service.name` (`OTEL_SERVICE_NAME`, default `torii`). */
  serviceName: string;
  serviceVersion?: string;
  sampler: TraceSampler;
  logger: GatewayLogger;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  /** Spans held while the collector is slow or down; more are dropped and counted (default 2048). */
  maxQueuedSpans?: number;
  /** Spans per export request (default 512). */
  maxBatchSpans?: number;
  /** One export request's bound (default 10 s). */
  timeoutMs?: number;
}

/** The exporter of request spans: {@link createOtlpTraceExporter}. */
export interface OtlpTraceExporter {
  /** Samples the request and queues its span (memory only; the request path never waits on the collector). */
  record(observation: RequestObservation): void;
  /** Sends what is queued, in batches; never rejects (a failed export is logged and its spans dropped). */
  flush(): Promise<void>;
  /** Spans dropped so far (queue full, or a failed export). */
  dropped(): number;
}

/** How often a failed export is logged at most. */
const failureLogIntervalMs = 60_000;

/**
 * Exports one span per sampled request to an OpenTelemetry collector over OTLP/HTTP (JSON), with nothing but
 * `fetch`, so it runs on Node, Deno, Bun and Workers alike (OpenTelemetry's JS SDK and exporter would add their
 * context machinery and ~100 KB to a Worker for one span per request). The runtime decides when to `flush`: a timer
 * where timers outlive requests, `waitUntil` after each request on Workers. Memory is bounded by `maxQueuedSpans`.
 *
 * @example
 * const exporter = createOtlpTraceExporter({ endpoint: 'http://collector:4318/v1/traces', serviceName: 'torii',
 *   sampler: createTraceSampler({ sampler: 'parentbased_always_on', ratio: 1 }), logger });
 * const services = { traces: (observation) => exporter.record(observation) };
 */
export function createOtlpTraceExporter(options: OtlpTraceExporterOptions): OtlpTraceExporter {
  const send = options.fetch ?? fetch;
  const maxQueued = options.maxQueuedSpans ?? 2048;
  const maxBatch = options.maxBatchSpans ?? 512;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const resource = {
    attributes: [
      { key: 'service.name', value: { stringValue: options.serviceName } },
      ...(options.serviceVersion === undefined
        ? []
        : [{ key: 'service.version', value: { stringValue: options.serviceVersion } }]),
    ],
  };
  const queue: OtlpSpan[] = [];
  let dropped = 0;
  let lastFailureLoggedAt = -Infinity;
  let running: Promise<void> | undefined;

  const exportBatch = async (spans: OtlpSpan[]): Promise<void> => {
    const body = JSON.stringify({
      resourceSpans: [{ resource, scopeSpans: [{ scope: { name: 'torii-gateway' }, spans }] }],
    });
    try {
      const response = await send(options.endpoint, {
        method: 'POST',
        headers: { ...options.headers, 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`the collector answered ${response.status}`);
    } catch (error) {
      dropped += spans.length;
      const now = Date.now();
      if (now - lastFailureLoggedAt >= failureLogIntervalMs) {
        lastFailureLoggedAt = now;
        options.logger.warn('trace export failed; its spans are dropped', {
          spans: spans.length,
          droppedSoFar: dropped,
          reason: error instanceof Error ? error.message : String(error),
        });
      }
    }
  };

  const drain = async (): Promise<void> => {
    while (queue.length > 0) await exportBatch(queue.splice(0, maxBatch));
  };

  return {
    record(observation) {
      const parent = observation.traceParent;
      const traceId = parent?.traceId ?? randomHex(16);
      if (!options.sampler(traceId, parent)) return;
      if (queue.length >= maxQueued) {
        dropped++;
        return;
      }
      queue.push(otlpSpanOf(observation, { traceId, spanId: randomHex(8) }, parent));
    },
    flush() {
      if (running !== undefined) return running.then(() => (queue.length > 0 ? this.flush() : undefined));
      if (queue.length === 0) return Promise.resolve();
      running = drain().finally(() => {
        running = undefined;
      });
      return running;
    },
    dropped: () => dropped,
  };
}
