/**
 * The seams an adapter fills for its runtime. The core never asks which runtime it is on; it calls these.
 */

import type { TokenCounter } from './tokens/token-counter.ts';
import type { GatewayLogger } from './observability/gateway-logger.ts';
import { createJsonLogger } from './observability/json-logger.ts';
import type { RequestObservation } from './observability/request-observation.ts';

/** What the gateway sends upstream: a subset of RequestInit every client can honour, and the call's bounds. */
export interface UpstreamRequestInit {
  method: string;
  headers: Record<string, string>;
  body: string | null;
  /** The client's signal: when it aborts, the upstream call (and its body) must be cancelled. */
  signal: AbortSignal;
  /**
   * Time allowed until the response headers arrive, in ms. On expiry the client rejects with an
   * `UpstreamLimitError` (src/upstream) `headers-timeout` (named `TimeoutError`, as `AbortSignal.timeout` does).
   */
  headersTimeoutMs: number;
  /**
   * Time allowed for reading a whole body with {@link UpstreamResponse.text}, in ms from that call. On expiry the read
   * rejects with an `UpstreamLimitError` (src/upstream) `body-timeout` and the upstream call is aborted. A body read as a
   * stream has no total time limit (the gateway bounds the gaps between its bytes instead).
   */
  bodyTimeoutMs: number;
  /** Time allowed to open the connection, in ms; clients that cannot set it (the platform fetch) ignore it. */
  connectTimeoutMs?: number | undefined;
}

/** How a body is read chunk by chunk: a ReadableStream's reader, or anything that reads the same way. */
export interface ChunkReader {
  read(): Promise<ReadableStreamReadResult<Uint8Array>>;
  cancel(reason?: unknown): Promise<void>;
}

/**
 * The part of a fetch `Response` the gateway reads. The Node client returns a light object over undici's `dispatch`
 * that builds `headers` and `body` only when they are read; {@link createFetchUpstream} wraps the platform `Response`.
 */
export interface UpstreamResponse {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: Headers;
  /** The `content-type` header, or null; read on every answer, so clients may serve it without building `headers`. */
  readonly contentType: string | null;
  /**
   * The body as a stream, read with backpressure: the client reads from the upstream only as fast as this stream is
   * read, so nothing is buffered whole. Cancelling it aborts the upstream call.
   */
  readonly body: ReadableStream<Uint8Array> | null;
  /**
   * The body read chunk by chunk with no ReadableStream around it: the same backpressure, and cancelling aborts the
   * upstream call. Optional, for clients that have a cheaper way than `body` (each ReadableStream read costs promise
   * hops on Node); use one of the two, once.
   */
  bodyReader?(): ChunkReader;
  /**
   * The whole body as text, at most `maxBytes` bytes: past them it rejects with an `UpstreamLimitError` (src/upstream)
   * `body-too-large` and aborts the upstream call, so a huge answer never sits in memory.
   */
  text(maxBytes: number): Promise<string>;
}

/** A fetch-shaped upstream client: undici with pooled keep-alive on Node, the platform fetch elsewhere. */
export type UpstreamFetch = (url: string, init: UpstreamRequestInit) => Promise<UpstreamResponse>;

export type { RequestObservation } from './observability/request-observation.ts';
export type { GatewayLogger } from './observability/gateway-logger.ts';

/** One upstream attempt as routing saw it (a request makes several when it is retried or falls back). */
export interface AttemptObservation {
  /** The group of the deployment tried (the requested one, or a fallback). */
  modelGroup: string;
  /** The deployment's id, `<group>/<index>`. */
  deployment: string;
  provider: string;
  /** `success`; `failure` (held against the deployment); `other` (the request's own error, the client left). */
  outcome: 'success' | 'failure' | 'other';
  /** Which attempt of its request this was, from 1. */
  attempt: number;
  /** Whether it was made on a fallback group. */
  fallback: boolean;
}

/** A deployment's circuit opening or closing in this process. */
export interface CircuitObservation {
  deployment: string;
  state: 'open' | 'closed';
  /** `local`: this process saw it happen; `shared`: another process did and this one took it over. */
  source: 'local' | 'shared';
}

/**
 * In-memory metrics. Implementations must not do I/O on these calls: they run on the request path.
 * prom-client lives behind this interface on Node; elsewhere {@link noMetrics} is used.
 */
export interface GatewayMetrics {
  requestStarted(): void;
  requestFinished(observation: RequestObservation): void;
  /** An upstream attempt ended (optional: metrics without routing series leave it out). */
  attemptFinished?(observation: AttemptObservation): void;
  /** A deployment's circuit opened or closed (optional). */
  circuitChanged?(observation: CircuitObservation): void;
}

/** Metrics that record nothing. */
export const noMetrics: GatewayMetrics = {
  requestStarted() {},
  requestFinished() {},
};

/**
 * A logger writing one JSON line per call to the console, at `info` and above, each with an ISO-8601 `time` and its
 * `level` (see createJsonLogger for another level or writer).
 */
export const consoleLogger: GatewayLogger = createJsonLogger();

/** The runtime services the gateway uses; every field has a Web-standard default. */
export interface GatewayServices {
  /** Defaults to the global fetch. */
  upstreamFetch: UpstreamFetch;
  /** Defaults to {@link noMetrics}. */
  metrics: GatewayMetrics;
  /** Defaults to {@link consoleLogger}. */
  logger: GatewayLogger;
  /**
   * Receives every finished request (streams: when the stream ended), to write its access line (see
   * src/observability/access-log.ts `createAccessLog`). Absent: no access line. It runs on the request path: memory
   * work and a buffered write only.
   */
  accessLog?: (observation: RequestObservation) => void;
  /**
   * Receives every finished request, like `accessLog`, to export its span (src/observability/otlp-trace-exporter.ts);
   * absent (the default): no span is made and the `traceparent` header is not read.
   */
  traces?: (observation: RequestObservation) => void;
  /**
   * False where `now` stands still while code runs and moves only when I/O completes (workerd, a Spectre mitigation):
   * the gateway's own time (overhead) cannot be measured there, and is left out of the timing headers, the metrics and
   * the access line instead of reading 0. Defaults to true.
   */
  clockAdvancesDuringCompute?: boolean;
  /** A monotonic clock in ms. Defaults to `performance.now`. */
  now: () => number;
  /** Serves `GET /metrics` (Prometheus text). Absent: the route answers 404. */
  metricsExposition?: () => Promise<{ contentType: string; body: string }>;
  /** False while the process drains for shutdown, so `/health/ready` answers 503. Defaults to always ready. */
  isReady?: () => boolean;
  /**
   * Real tokenizers for `POST /v1/messages/count_tokens` to deployments that cannot count (see TokenCounter); the
   * Node adapter lends gpt-tokenizer's OpenAI encodings. Absent, or without a tokenizer for the model: the estimate.
   */
  tokenCounter?: TokenCounter;
}
