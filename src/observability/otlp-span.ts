import type { RequestObservation } from './request-observation.ts';
import type { TraceParent } from './trace-context.ts';

/** An attribute in OTLP's JSON encoding (int64 values are strings). */
export interface OtlpAttribute {
  key: string;
  value: { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean };
}

/** A span in OTLP's JSON encoding (ids hex, times in Unix nanoseconds as strings). */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** 2: SPAN_KIND_SERVER. */
  kind: 2;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpAttribute[];
  /** 0: unset; 2: error (a 5xx answer). */
  status: { code: 0 | 2 };
}

/** The GenAI conventions' `gen_ai.provider.name` for the providers whose name differs from torii's. */
const genAiProviderNames: Readonly<Record<string, string>> = {
  azure: 'azure.ai.openai',
  'azure-openai': 'azure.ai.openai',
  bedrock: 'aws.bedrock',
  'bedrock-anthropic': 'aws.bedrock',
  gemini: 'gcp.gemini',
  vertex: 'gcp.vertex_ai',
  'vertex-anthropic': 'gcp.vertex_ai',
  mistral: 'mistral_ai',
  xai: 'x_ai',
};

/** `gen_ai.operation.name` for the gateway's operations that are model calls. */
function genAiOperation(observation: RequestObservation): string | undefined {
  if (observation.operation === 'embeddings') return 'embeddings';
  if (observation.operation !== 'chat') return undefined;
  return observation.clientApi === 'openai-completions' ? 'text_completion' : 'chat';
}

/** Epoch milliseconds (fractional) as Unix nanoseconds, exactly, as a decimal string. */
function unixNanoseconds(milliseconds: number): string {
  return (BigInt(Math.round(milliseconds * 1000)) * 1000n).toString();
}

function text(key: string, value: string | undefined): OtlpAttribute | undefined {
  return value === undefined ? undefined : { key, value: { stringValue: value } };
}

function integer(key: string, value: number | undefined): OtlpAttribute | undefined {
  return value === undefined || !Number.isFinite(value)
    ? undefined
    : { key, value: { intValue: String(Math.round(value)) } };
}

function decimal(key: string, value: number | undefined): OtlpAttribute | undefined {
  return value === undefined || !Number.isFinite(value) ? undefined : { key, value: { doubleValue: value } };
}

/**
 * The span of one finished request, from the same observation its access line and metrics read: named
 * `{gen_ai.operation.name} {model group}` as the GenAI conventions name model calls, with their attributes
 * (`gen_ai.operation.name`, `gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.response.model`,
 * `gen_ai.usage.input_tokens` / `output_tokens`), the HTTP status, and torii's own (`torii.request_id`, the
 * deployment, attempts, cost, time to first token). A child of the caller's span when a `traceparent` came in.
 *
 * @example
 * const span = otlpSpanOf(observation, { traceId: randomHex(16), spanId: randomHex(8) }, undefined);
 */
export function otlpSpanOf(
  observation: RequestObservation,
  ids: { traceId: string; spanId: string },
  parent: TraceParent | undefined,
): OtlpSpan {
  const operation = genAiOperation(observation);
  const provider = observation.provider;
  const attributes = [
    text('gen_ai.operation.name', operation),
    text('gen_ai.provider.name', provider === undefined ? undefined : (genAiProviderNames[provider] ?? provider)),
    text('gen_ai.request.model', observation.modelGroup),
    text('gen_ai.response.model', observation.upstreamModel),
    integer('gen_ai.usage.input_tokens', operation === undefined ? undefined : observation.inputTokens),
    integer('gen_ai.usage.output_tokens', operation === undefined ? undefined : observation.outputTokens),
    integer('http.response.status_code', observation.status),
    text('error.type', observation.status >= 500 ? String(observation.status) : undefined),
    text('torii.request_id', observation.requestId),
    text('torii.client_request_id', observation.clientRequestId ?? undefined),
    text('torii.client_api', observation.clientApi),
    text('torii.operation', observation.operation),
    text('torii.key_id', observation.keyId),
    text('torii.served_model_group', observation.servedModelGroup),
    text('torii.deployment', observation.deployment),
    integer('torii.attempts', observation.attempts),
    { key: 'torii.stream', value: { boolValue: observation.stream } },
    integer('torii.usage.cached_input_tokens', operation === undefined ? undefined : observation.cachedInputTokens),
    integer('torii.usage.reasoning_tokens', operation === undefined ? undefined : observation.reasoningTokens),
    text('torii.usage.source', operation === undefined ? undefined : observation.usageSource),
    decimal('torii.cost_usd', operation === undefined ? undefined : observation.costUsd),
    decimal('torii.time_to_first_token_ms', observation.timeToFirstTokenMs),
    decimal('torii.upstream_ms', observation.upstreamMs),
  ].filter((attribute): attribute is OtlpAttribute => attribute !== undefined);
  return {
    traceId: ids.traceId,
    spanId: ids.spanId,
    ...(parent === undefined ? {} : { parentSpanId: parent.spanId }),
    name: `${operation ?? observation.operation} ${observation.modelGroup ?? ''}`.trim(),
    kind: 2,
    startTimeUnixNano: unixNanoseconds(observation.startedAtWall),
    endTimeUnixNano: unixNanoseconds(observation.startedAtWall + observation.durationMs),
    attributes,
    status: { code: observation.status >= 500 ? 2 : 0 },
  };
}
