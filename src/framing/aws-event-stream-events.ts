import { GatewayError, upstreamError, type GatewayErrorType } from '../errors.ts';
import type { AwsEventStreamMessage } from './aws-event-stream-decoder.ts';
import { parseStreamEventJson } from './decode-json-events.ts';
import { defaultJsonLimits, type JsonLimits } from './json-limits.ts';
import { parseJson } from './parse-json.ts';
import type { DecodedStreamEvent } from './server-sent-event.ts';

/**
 * The exceptions Bedrock's streams (ConverseStream, InvokeModelWithResponseStream) send as messages, with the HTTP
 * status its API reference gives each: what routing and the client see as the upstream's status.
 */
const exceptionStatuses: Readonly<Record<string, number>> = {
  validationException: 400,
  accessDeniedException: 403,
  resourceNotFoundException: 404,
  modelTimeoutException: 408,
  modelStreamErrorException: 424,
  throttlingException: 429,
  internalServerException: 500,
  serviceUnavailableException: 503,
};

/** The client-facing status and type of an upstream status (the stream failed; a 4xx that is the caller's is passed on). */
function clientFacing(upstreamStatus: number): { status: number; type: GatewayErrorType } {
  if (upstreamStatus === 400) return { status: 400, type: 'invalid_request_error' };
  if (upstreamStatus === 429) return { status: 429, type: 'rate_limit_error' };
  if (upstreamStatus === 408) return { status: 504, type: 'timeout_error' };
  return { status: 502, type: 'upstream_error' };
}

const utf8 = /* @__PURE__ */ new TextDecoder();

function headerText(message: AwsEventStreamMessage, name: string): string | undefined {
  const value = message.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** The `message` of an exception's JSON payload, when it has one (bounded: the payload is the upstream's). */
function exceptionMessage(payload: Uint8Array): string | undefined {
  const parsed = parseJson(utf8.decode(payload.subarray(0, 64 * 1024)));
  if (!parsed.ok || typeof parsed.value !== 'object' || parsed.value === null) return undefined;
  const record = parsed.value as Record<string, unknown>;
  const message = record.message ?? record.Message;
  return typeof message === 'string' ? message.slice(0, 2_000) : undefined;
}

/**
 * Reads one AWS event-stream message as the {@link DecodedStreamEvent} providers consume (the `:event-type` header and
 * the JSON payload), the same shape an SSE stream's events have, so a provider never sees bytes or framing. An
 * `exception` message (`:exception-type`, such as `throttlingException`) or an `error` message (`:error-code`,
 * `:error-message`) throws a GatewayError carrying the upstream status AWS documents for it (429 and 400 reach the
 * client as themselves, the rest as 502; `retryable` for 408, 424, 429, 500 and 503), so routing retries a stream that
 * failed before its first byte, and a stream already under way ends with the client dialect's error event. A payload
 * that is not JSON, or past the JSON limits, is a broken stream ({@link parseStreamEventJson}, shared with SSE). A
 * `chunk` event (InvokeModelWithResponseStream) is unwrapped: its base64 `bytes` hold the model's own event.
 *
 * @example
 * for (const message of decoder.push(chunk)) events.push(decodeAwsStreamEvent(message, 'bedrock'));
 */
export function decodeAwsStreamEvent(
  message: AwsEventStreamMessage,
  provider: string,
  limits: JsonLimits = defaultJsonLimits,
): DecodedStreamEvent {
  const messageType = headerText(message, ':message-type') ?? 'event';
  if (messageType === 'exception') {
    const exceptionType = headerText(message, ':exception-type') ?? 'unknownException';
    const upstreamStatus = exceptionStatuses[exceptionType] ?? 500;
    const detail = exceptionMessage(message.payload);
    return throwUpstream(provider, upstreamStatus, exceptionType, detail);
  }
  if (messageType === 'error') {
    const code = headerText(message, ':error-code') ?? 'unknownError';
    return throwUpstream(provider, 500, code, headerText(message, ':error-message')?.slice(0, 2_000));
  }
  if (messageType !== 'event') {
    throw upstreamError(
      'upstream_invalid_stream',
      provider,
      `Upstream ${provider} sent an event-stream message of type ${messageType.slice(0, 100)}.`,
    );
  }
  const data = parseStreamEventJson(utf8.decode(message.payload), provider, limits);
  const eventType = headerText(message, ':event-type');
  if (eventType === 'chunk') return unwrapPayloadPart(data, provider, limits);
  return { type: eventType, data };
}

/**
 * InvokeModelWithResponseStream wraps each of the model's own events in a `chunk` message whose JSON payload is
 * `{"bytes": "<base64 of the event>"}` (Claude's are Anthropic's SSE events, `{"type":"message_start",...}`): the
 * event inside is what a provider reads, with its own `type` as the event type, as an SSE stream would give it.
 */
function unwrapPayloadPart(data: unknown, provider: string, limits: JsonLimits): DecodedStreamEvent {
  const bytes = typeof data === 'object' && data !== null ? (data as Record<string, unknown>).bytes : undefined;
  if (typeof bytes !== 'string') {
    throw upstreamError(
      'upstream_invalid_stream',
      provider,
      `Upstream ${provider} sent a chunk event without its base64 \`bytes\`.`,
    );
  }
  let text: string;
  try {
    text = utf8.decode(Uint8Array.from(atob(bytes), (character) => character.charCodeAt(0)));
  } catch {
    throw upstreamError(
      'upstream_invalid_stream',
      provider,
      `Upstream ${provider} sent a chunk whose bytes are not base64.`,
    );
  }
  const inner = parseStreamEventJson(text, provider, limits);
  const innerType = typeof inner === 'object' && inner !== null ? (inner as Record<string, unknown>).type : undefined;
  return { type: typeof innerType === 'string' ? innerType : undefined, data: inner };
}

function throwUpstream(provider: string, upstreamStatus: number, code: string, detail: string | undefined): never {
  const { status, type } = clientFacing(upstreamStatus);
  throw new GatewayError({
    status,
    type,
    code: 'upstream_stream_exception',
    provider,
    upstreamStatus,
    retryable: [408, 424, 429, 500, 503].includes(upstreamStatus),
    message: `Upstream ${provider} ended its stream with ${code.slice(0, 100)}${detail === undefined ? '' : `: ${detail}`}`,
  });
}
