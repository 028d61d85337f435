import { AwsEventStreamDecoder } from './aws-event-stream-decoder.ts';
import { decodeAwsStreamEvent } from './aws-event-stream-events.ts';
import type { StreamEventDecoder } from './stream-events.ts';

/**
 * The AWS event-stream decoder of `openStreamEventDecoder` (loaded on demand): each checked message as its
 * `:event-type` and JSON payload; an exception message throws; a body cut inside a message fails at the end.
 *
 * @example
 * const decoder = createAwsEventDecoder('bedrock');
 */
export function createAwsEventDecoder(provider: string): StreamEventDecoder {
  const decoder = new AwsEventStreamDecoder({ provider });
  return {
    push: (chunk) => decoder.push(chunk).map((message) => decodeAwsStreamEvent(message, provider)),
    end() {
      decoder.end();
      return [];
    },
  };
}
