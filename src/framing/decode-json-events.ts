import { GatewayError } from '../errors.ts';
import { parseJson } from './parse-json.ts';
import type { DecodedStreamEvent, ServerSentEvent } from './server-sent-event.ts';

/**
 * Turns an SSE event into the {@link DecodedStreamEvent} a provider reducer consumes: the OpenAI `[DONE]` sentinel
 * becomes `undefined` (end of data), anything else must be JSON or the upstream broke its protocol.
 */
export function decodeJsonEvent(event: ServerSentEvent, provider: string): DecodedStreamEvent | undefined {
  if (event.data === '[DONE]') return undefined;
  const parsed = parseJson(event.data);
  if (!parsed.ok) {
    throw new GatewayError({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_invalid_stream',
      provider,
      message: `Upstream ${provider} sent a stream event that is not JSON: ${parsed.error}`,
    });
  }
  return { type: event.event, data: parsed.value };
}
