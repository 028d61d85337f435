import { upstreamError, type GatewayError } from '../errors.ts';
import { defaultJsonLimits, findJsonLimitViolation, type JsonLimits } from './json-limits.ts';
import { parseJson } from './parse-json.ts';
import type { DecodedStreamEvent, ServerSentEvent } from './server-sent-event.ts';

function invalidStreamEvent(provider: string, reason: string): GatewayError {
  return upstreamError('upstream_invalid_stream', provider, `Upstream ${provider} sent a stream event that ${reason}`);
}

/**
 * Turns an SSE event into the {@link DecodedStreamEvent} a provider reducer consumes: the OpenAI `[DONE]` sentinel
 * becomes `undefined` (end of data), anything else must be JSON or the upstream broke its protocol. Events are held
 * to `limits` (default {@link defaultJsonLimits}) like client bodies, since reducers re-serialise parts of them (a
 * tool's `input`): an event too short to break the depth limit is not scanned, so ordinary events cost nothing more.
 */
export function decodeJsonEvent(
  event: ServerSentEvent,
  provider: string,
  limits: JsonLimits = defaultJsonLimits,
): DecodedStreamEvent | undefined {
  if (event.data === '[DONE]') return undefined;
  // Nesting N levels deep takes at least 2N characters (`[` and `]`).
  if (event.data.length > 2 * limits.maxDepth) {
    const violation = findJsonLimitViolation(event.data, limits);
    if (violation !== undefined) {
      throw invalidStreamEvent(
        provider,
        violation.kind === 'depth'
          ? `nests deeper than ${violation.limit} levels`
          : `has more than ${violation.limit} items in one ${violation.container}`,
      );
    }
  }
  const parsed = parseJson(event.data);
  if (!parsed.ok) throw invalidStreamEvent(provider, `is not JSON: ${parsed.error}`);
  return { type: event.event, data: parsed.value };
}
