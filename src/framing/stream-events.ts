import type { DecodedStreamEvent } from './server-sent-event.ts';

/** How an upstream frames its stream (a translator's `streamFraming`). */
export type StreamFraming = 'sse' | 'aws-event-stream';

/**
 * What a stream decoder yields: a decoded event, or `end`, the framing's own end marker (OpenAI's `data: [DONE]`),
 * which is no event of the provider's.
 */
export type StreamEventItem = DecodedStreamEvent | 'end';

/** Bytes in, the provider's decoded events out, whatever the framing. */
export interface StreamEventDecoder {
  /** Feeds bytes; answers the events they complete, in order. */
  push(chunk: Uint8Array): StreamEventItem[];
  /** The end of the body: the events still held (an SSE event without its blank line); throws for a cut message. */
  end(): StreamEventItem[];
}
