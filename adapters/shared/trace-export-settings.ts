import type { GatewayLogger } from '../../src/observability/gateway-logger.ts';
import { createOtlpTraceExporter, type OtlpTraceExporter } from '../../src/observability/otlp-trace-exporter.ts';
import {
  createTraceSampler,
  traceSamplerNames,
  type TraceSamplerSettings,
} from '../../src/observability/trace-sampler.ts';
import type { RequestObservation } from '../../src/observability/request-observation.ts';
import { StartupError } from './startup-error.ts';

/** Where and how spans are exported, from OpenTelemetry's standard environment variables. */
export interface TraceExportSettings {
  endpoint: string;
  headers: Record<string, string>;
  serviceName: string;
  sampler: TraceSamplerSettings;
}

function text(environment: Record<string, unknown>, name: string): string | undefined {
  const value = environment[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** `OTEL_EXPORTER_OTLP_HEADERS`' `name=value,name=value` (values URL-encoded), or a StartupError naming `variable`. */
function parseHeaders(variable: string, value: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (value === undefined) return headers;
  for (const pair of value.split(',')) {
    const equals = pair.indexOf('=');
    const name = pair.slice(0, equals).trim();
    if (equals <= 0 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
      throw new StartupError(variable, 'must be name=value pairs separated by commas (values are not shown)');
    try {
      headers[name] = decodeURIComponent(pair.slice(equals + 1).trim());
    } catch {
      throw new StartupError(variable, `the value of ${name} is not valid URL encoding (values are not shown)`);
    }
  }
  return headers;
}

function endpointOf(environment: Record<string, unknown>): { variable: string; url: string } | undefined {
  const traces = text(environment, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  if (traces !== undefined) return { variable: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', url: traces };
  const base = text(environment, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (base === undefined) return undefined;
  return { variable: 'OTEL_EXPORTER_OTLP_ENDPOINT', url: `${base.replace(/\/+$/, '')}/v1/traces` };
}

/**
 * Reads span export from OpenTelemetry's variables; undefined (off, the default) unless an endpoint is set:
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full URL) or `OTEL_EXPORTER_OTLP_ENDPOINT` (+ `/v1/traces`), with
 * `OTEL_EXPORTER_OTLP_HEADERS` / `OTEL_EXPORTER_OTLP_TRACES_HEADERS`, `OTEL_SERVICE_NAME` (default `torii`),
 * `OTEL_TRACES_SAMPLER` (default `parentbased_always_on`) and `OTEL_TRACES_SAMPLER_ARG` (the ratio, default 1).
 * `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` turn it off. The protocol is OTLP/HTTP with JSON
 * (`OTEL_EXPORTER_OTLP_PROTOCOL` may say `http/json`; another protocol is refused). A bad value is a StartupError.
 *
 * @example
 * const settings = readTraceExportSettings(process.env); // undefined when no endpoint is set
 */
export function readTraceExportSettings(environment: Record<string, unknown>): TraceExportSettings | undefined {
  if (text(environment, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  if (text(environment, 'OTEL_TRACES_EXPORTER')?.toLowerCase() === 'none') return undefined;
  const endpoint = endpointOf(environment);
  if (endpoint === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(endpoint.url);
  } catch {
    throw new StartupError(endpoint.variable, 'is not a URL (expected http://collector:4318)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new StartupError(endpoint.variable, `must be an http:// or https:// URL, got ${url.protocol}//`);
  for (const variable of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const protocol = text(environment, variable);
    if (protocol !== undefined && protocol !== 'http/json')
      throw new StartupError(variable, `torii exports OTLP over HTTP with JSON: set it to http/json (got ${protocol})`);
  }
  const samplerName = (text(environment, 'OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on').toLowerCase();
  if (!traceSamplerNames.includes(samplerName as TraceSamplerSettings['sampler']))
    throw new StartupError('OTEL_TRACES_SAMPLER', `must be one of ${traceSamplerNames.join(', ')}`);
  const ratioText = text(environment, 'OTEL_TRACES_SAMPLER_ARG');
  const ratio = ratioText === undefined ? 1 : Number(ratioText);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1)
    throw new StartupError('OTEL_TRACES_SAMPLER_ARG', `must be a number from 0 to 1, got "${ratioText}"`);
  return {
    endpoint: url.toString(),
    headers: {
      ...parseHeaders('OTEL_EXPORTER_OTLP_HEADERS', text(environment, 'OTEL_EXPORTER_OTLP_HEADERS')),
      ...parseHeaders('OTEL_EXPORTER_OTLP_TRACES_HEADERS', text(environment, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS')),
    },
    serviceName: text(environment, 'OTEL_SERVICE_NAME') ?? 'torii',
    sampler: { sampler: samplerName as TraceSamplerSettings['sampler'], ratio },
  };
}

/** Span export as a server wires it: the `traces` service, and how to send what is queued. */
export interface TraceExport {
  exporter: OtlpTraceExporter;
  /** For GatewayServices.traces. */
  traces: (observation: RequestObservation) => void;
  /** Stops the flush timer and sends what is queued (at shutdown, after the last request). */
  close(): Promise<void>;
}

/**
 * Opens span export from the environment (see {@link readTraceExportSettings}); undefined when it is off. With
 * `flushEveryMs` a timer sends the queue that often (Node, Deno); without one the caller flushes (Workers: after each
 * request, in `waitUntil`).
 *
 * @example
 * const tracing = openTraceExport(process.env, logger, { flushEveryMs: 1000 });
 * // services: { ...(tracing ? { traces: tracing.traces } : {}) }; on shutdown: await tracing?.close();
 */
export function openTraceExport(
  environment: Record<string, unknown>,
  logger: GatewayLogger,
  options: { flushEveryMs?: number; serviceVersion?: string } = {},
): TraceExport | undefined {
  const settings = readTraceExportSettings(environment);
  if (settings === undefined) return undefined;
  const exporter = createOtlpTraceExporter({
    endpoint: settings.endpoint,
    headers: settings.headers,
    serviceName: settings.serviceName,
    ...(options.serviceVersion === undefined ? {} : { serviceVersion: options.serviceVersion }),
    sampler: createTraceSampler(settings.sampler),
    logger,
  });
  const timer =
    options.flushEveryMs === undefined ? undefined : setInterval(() => void exporter.flush(), options.flushEveryMs);
  // A timer of its own must not keep a process alive that has nothing else to do.
  (timer as { unref?: () => void } | undefined)?.unref?.();
  return {
    exporter,
    traces: (observation) => exporter.record(observation),
    async close() {
      if (timer !== undefined) clearInterval(timer);
      await exporter.flush();
    },
  };
}
