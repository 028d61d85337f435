import { upstreamError, type GatewayError } from '../errors.ts';
import { defaultJsonLimits, findJsonLimitViolation, type JsonLimits } from './json-limits.ts';
import { parseJson } from './parse-json.ts';
import type { DecodedStreamEvent, ServerSentEvent } from './server-sent-event.ts';

function invalidStreamEvent(provider: string, reason: string): GatewayError {
  return upstreamError('upstream_invalid_stream', provider, `Upstream ${provider} sent a stream event that ${reason}`);
}

/**
 * Parses one stream event's JSON text (an SSE event's data, an AWS event-stream payload), held to `limits` like client
 * bodies, since reducers re-serialise parts of them (a tool's `input`): text too short to break the depth limit is not
 * scanned, so ordinary events cost nothing more. Anything else than JSON within the limits is a broken stream (a 502
 * `upstream_invalid_stream` naming the provider).
 */
export function parseStreamEventJson(text: string, provider: string, limits: JsonLimits = defaultJsonLimits): unknown {
  // Nesting N levels deep takes at least 2N characters (`[` and `]`).
  if (text.length > 2 * limits.maxDepth) {
    const violation = findJsonLimitViolation(text, limits);
    if (violation !== undefined) {
      throw invalidStreamEvent(
        provider,
        violation.kind === 'depth'
          ? `nests deeper than ${violation.limit} levels`
          : `has more than ${violation.limit} items in one ${violation.container}`,
      );
    }
  }
  const parsed = parseJson(text);
  if (!parsed.ok) throw invalidStreamEvent(provider, `is not JSON: ${parsed.error}`);
  return parsed.value;
}

/**
 * Turns an SSE event into the {@link DecodedStreamEvent} a provider reducer consumes: the OpenAI `[DONE]` sentinel
 * becomes `undefined` (end of data), anything else must be JSON within `limits` ({@link parseStreamEventJson}).
 */
export function decodeJsonEvent(
  event: ServerSentEvent,
  provider: string,
  limits: JsonLimits = defaultJsonLimits,
): DecodedStreamEvent | undefined {
  if (event.data === '[DONE]') return undefined;
  return { type: event.event, data: parseStreamEventJson(event.data, provider, limits) };
}
